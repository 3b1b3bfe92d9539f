package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// One failing call is dropped from the shared transaction; the others are
// retried without it and committed, and it is told to run alone.
func TestBatchDropsFailingCall(t *testing.T) {
	s := newStore(t)
	runs := map[string]int{}
	call := func(key string, fail bool) *batchCall {
		return &batchCall{done: make(chan batchResult, 1), fn: func(tx *Tx) error {
			runs[key]++
			if err := tx.SetChatThread(key, "t"); err != nil {
				return err
			}
			if fail {
				return errors.New("no")
			}
			return nil
		}}
	}
	a, b, c := call("a", false), call("b", true), call("c", false)
	s.commitCalls([]*batchCall{a, b, c})
	for _, tc := range []struct {
		name string
		c    *batchCall
		want batchResult
	}{{"a", a, batchResult{}}, {"b", b, batchResult{solo: true}}, {"c", c, batchResult{}}} {
		if got := <-tc.c.done; got != tc.want {
			t.Errorf("%s: result %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if runs["a"] != 2 || runs["b"] != 1 || runs["c"] != 1 {
		t.Errorf("runs %v", runs)
	}
	for key, found := range map[string]bool{"a": true, "b": false, "c": true} {
		if _, err := s.ChatThread(key); (err == nil) != found {
			t.Errorf("ChatThread(%s): %v", key, err)
		}
	}
}

func TestBatchErrorsAndPanics(t *testing.T) {
	s := newStore(t)
	boom := errors.New("boom")
	if err := s.Batch(func(*Tx) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Batch error %v, want %v", err, boom)
	}
	func() {
		defer func() {
			if r := recover(); r != "bad" {
				t.Errorf("recovered %v, want the fn's panic", r)
			}
		}()
		s.Batch(func(*Tx) error { panic("bad") })
	}()
	// The store still works after both.
	if err := s.Batch(func(tx *Tx) error { return tx.SetChatThread("c", "t") }); err != nil {
		t.Fatal(err)
	}
}

// Many concurrent callers, some failing: each gets its own outcome and only
// the successful writes are stored.
func TestBatchConcurrentOutcomes(t *testing.T) {
	s := newStore(t)
	const n = 64
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.Batch(func(tx *Tx) error {
				if err := tx.SetChatThread(fmt.Sprint(i), "t"); err != nil {
					return err
				}
				if i%5 == 0 {
					return fmt.Errorf("fail %d", i)
				}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		wantFail := i%5 == 0
		if (err != nil) != wantFail || (wantFail && err.Error() != fmt.Sprintf("fail %d", i)) {
			t.Errorf("call %d: %v", i, err)
		}
		_, gerr := s.ChatThread(fmt.Sprint(i))
		if stored := gerr == nil; stored == wantFail {
			t.Errorf("call %d: stored %t", i, stored)
		}
	}
}
