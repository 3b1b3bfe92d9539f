package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/store/storetest"
)

// grow gives the thread of chat (a Telegram private chat) a long history,
// a few pages' worth, and queues a message of its for the next start, as
// if the process had died after accepting it. It returns the thread's id.
func grow(t *testing.T, path string, chat int64) string {
	t.Helper()
	s, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in := bus.Inbound{Channel: "telegram", ChatID: strconv.FormatInt(chat, 10), UserID: strconv.FormatInt(chat, 10),
		MessageID: "9999", EventKey: "test:queued", Text: "queued before the restart", Time: time.Now()}
	var id string
	err = s.Update(func(tx *store.Tx) error {
		var err error
		if id, err = tx.ChatThread(in.ChatKey()); err != nil {
			return fmt.Errorf("chat %s: %w", in.ChatKey(), err)
		}
		for i := range 40 {
			role := []string{"user", "assistant"}[i%2]
			if err := tx.AppendMessages(id, &store.Message{Role: role, Content: strings.Repeat("h", 1000)}); err != nil {
				return err
			}
		}
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		_, err = tx.PutInbound(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestDamagedConversationIsQuarantined: a page of one conversation's
// history is overwritten while deerflow is stopped. At the next start the
// message it had accepted for that conversation is answered with the
// quarantine notice instead of crashing the process, other conversations
// go on, /healthz is 503 naming the thread, /new starts that chat over, and
// the quarantined message is not replayed by a later start.
func TestDamagedConversationIsQuarantined(t *testing.T) {
	tg, model := newTelegram(t), echoModel(t)
	dir, addr := t.TempDir(), freeAddr(t)
	on := func(c *config.Config) { telegramOn(tg)(c); c.HTTP.Listen = addr }
	run := startServe(t, model, dir, on)
	tg.PushMessage(faketelegram.Private(ann, "first"))
	waitAnswer(t, tg, ann.ID, "reply to first")
	tg.PushMessage(faketelegram.Private(bob, "first"))
	waitAnswer(t, tg, bob.ID, "reply to first")
	run.stop()

	path := filepath.Join(dir, store.FileName)
	thread := grow(t, path, ann.ID)
	if err := storetest.DamageThread(path, thread); err != nil {
		t.Fatal(err)
	}

	run = startLogged(t, model, dir, &faultLog{}, on)
	srv, err := startOps(run.app, nil) // the harness starts no /healthz
	if err != nil {
		t.Fatal(err)
	}
	notice := "history is damaged"
	waitMessage(t, tg, ann.ID, notice) // the queued message: told, not crashed
	tg.PushMessage(faketelegram.Private(bob, "second"))
	waitAnswer(t, tg, bob.ID, "reply to second")
	_, _, body := waitHealth(t, addr, "503 for the damaged thread", func(code int, h health) bool { return code == 503 && !h.Store.OK })
	if !strings.Contains(body, "thread "+thread) || !strings.Contains(body, "deerflow doctor") {
		t.Errorf("/healthz does not name thread %s:\n%s", thread, body)
	}
	tg.PushMessage(faketelegram.Private(ann, "/new"))
	waitMessage(t, tg, ann.ID, "Started a new conversation")
	tg.PushMessage(faketelegram.Private(ann, "after new"))
	waitAnswer(t, tg, ann.ID, "reply to after new")
	stopOps(srv)
	run.stop()

	run = startServe(t, model, dir, on)
	tg.PushMessage(faketelegram.Private(bob, "third"))
	waitAnswer(t, tg, bob.ID, "reply to third")
	run.app.router.WaitIdle(context.Background())
	if n := len(tgAnswers(tg, ann.ID, notice)); n != 1 {
		t.Errorf("ann was told %d times that the history is damaged, want once:%s", n, dump(tg.Messages(ann.ID)))
	}
}

// writeThreads writes three threads to a new store at path and returns
// their messages.
func writeThreads(t *testing.T, path string) map[string][]*store.Message {
	t.Helper()
	s, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[string][]*store.Message{}
	err = s.Update(func(tx *store.Tx) error {
		for id, n := range map[string]int{"t-a": 3, "t-bad": 40, "t-c": 3} {
			if err := tx.PutThread(&store.Thread{ID: id}); err != nil {
				return err
			}
			for range n {
				m := &store.Message{Role: "user", Content: strings.Repeat("m", 1000)}
				if err := tx.AppendMessages(id, m); err != nil {
					return err
				}
				want[id] = append(want[id], m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// readThreads checks the messages of the threads in want, in the store at
// path.
func readThreads(t *testing.T, path string, want map[string][]*store.Message) {
	t.Helper()
	s, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id, msgs := range want {
		got, err := s.Messages(id, 0)
		if err != nil {
			t.Fatalf("%s: thread %s: %v", path, id, err)
		}
		if d := cmp.Diff(msgs, got); d != "" {
			t.Errorf("%s: thread %s (-want +got):\n%s", path, id, d)
		}
	}
}

// TestBinaryBackupDoctorRepair runs the real binary: `deerflow backup`
// and `deerflow doctor` while `deerflow serve` holds the database, then,
// with serve stopped and a page of one thread's history overwritten,
// `doctor` naming that thread (exit 1), `doctor --repair` keeping the old
// file and reporting the thread lost, and `doctor` passing the new file,
// which holds every other thread.
func TestBinaryBackupDoctorRepair(t *testing.T) {
	model := fakeopenai.New(t)
	addr, dir := freeAddr(t), t.TempDir()
	cfg := apiOnlyConfig(t, dir, addr, model.URL)
	appendConfig(t, cfg, "data_dir: "+filepath.Join(dir, "data")+"\n")
	env := []string{"DEERFLOW_API_TOKEN=" + apiToken}
	path := filepath.Join(dir, "data", store.FileName)
	want := writeThreads(t, path)

	serve := startBinaryServe(t, dir, cfg, env...)
	waitHealth(t, addr, "200", func(code int, _ health) bool { return code == 200 })
	backupFile := filepath.Join(dir, "backup.db")
	out, errOut, code := deerflow(t, dir, "", env, "backup", "--config", cfg, backupFile)
	if code != 0 || !strings.Contains(out, "Backed up") {
		t.Fatalf("backup while serving: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = deerflow(t, dir, "", env, "doctor", "--config", cfg)
	if code != 0 || !strings.Contains(out, "checking a copy") || !strings.Contains(out, "No damage found") {
		t.Errorf("doctor while serving: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code = deerflow(t, dir, "", env, "doctor", "--repair", "--config", cfg); code != 1 || !strings.Contains(errOut, "stop it") {
		t.Errorf("doctor --repair while serving: exit %d\n%s", code, errOut)
	}
	serve.Process.Kill()
	serve.Wait()
	readThreads(t, backupFile, want)

	if err := storetest.DamageThread(path, "t-bad"); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = deerflow(t, dir, "", env, "doctor", "--config", cfg)
	if code != 1 || !strings.Contains(out, "thread t-bad") {
		t.Fatalf("doctor on a damaged file: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = deerflow(t, dir, "", env, "doctor", "--repair", "--config", cfg)
	if code != 0 || !strings.Contains(out, "thread t-bad: history lost (40 messages)") {
		t.Fatalf("doctor --repair: exit %d\n%s%s", code, out, errOut)
	}
	if kept, _ := filepath.Glob(path + ".damaged-*"); len(kept) != 1 {
		t.Errorf("damaged files kept: %v, want one", kept)
	}
	if out, errOut, code = deerflow(t, dir, "", env, "doctor", "--config", cfg); code != 0 {
		t.Errorf("doctor after the repair: exit %d\n%s%s", code, out, errOut)
	}
	delete(want, "t-bad")
	readThreads(t, path, want)
}

// TestBinaryDoctorUsage: a missing backup file and stray arguments are
// usage errors; doctor on a data dir without a database passes.
func TestBinaryDoctorUsage(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "data_dir: "+filepath.Join(dir, "data")+"\n")
	if _, errOut, code := deerflow(t, dir, "", nil, "backup", "--config", cfg); code != 2 || !strings.Contains(errOut, "which file") {
		t.Errorf("backup without a file: exit %d\n%s", code, errOut)
	}
	if _, _, code := deerflow(t, dir, "", nil, "doctor", "--config", cfg, "extra"); code != 2 {
		t.Errorf("doctor with an argument: exit %d", code)
	}
	if out, _, code := deerflow(t, dir, "", nil, "doctor", "--config", cfg); code != 0 || !strings.Contains(out, "nothing to check") {
		t.Errorf("doctor without a database: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Error("doctor created the data dir")
	}
}
