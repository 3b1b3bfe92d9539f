package faketelegram

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Push queues an update for getUpdates and returns it as queued. A zero
// update_id is assigned (increasing, from 1000); messages get their chat
// learned, and a zero message_id (increasing per chat) and date filled in.
func (s *Server) Push(u Update) Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.UpdateID == 0 {
		u.UpdateID = s.nextUpdate
	}
	s.nextUpdate = max(s.nextUpdate, u.UpdateID+1)
	for _, m := range []**Message{&u.Message, &u.EditedMessage} {
		if *m != nil {
			c := **m
			s.inbound(&c)
			*m = &c
		}
	}
	if cq := u.CallbackQuery; cq != nil {
		c := *cq
		if c.Message != nil {
			m := *c.Message
			s.chat(m.Chat)
			c.Message = &m
		}
		if c.ID == "" {
			c.ID = "4382bfdwdsb323b2d" + strconv.Itoa(u.UpdateID)
		}
		if c.ChatInstance == "" {
			c.ChatInstance = "-1234567890123456789"
		}
		s.callbacks[c.ID] = true
		u.CallbackQuery = &c
	}
	i, _ := slices.BinarySearchFunc(s.updates, u.UpdateID, func(x Update, id int) int { return x.UpdateID - id })
	s.updates = slices.Insert(s.updates, i, u)
	close(s.pushed)
	s.pushed = make(chan struct{})
	s.notify()
	return u
}

// PushMessage queues a "message" update (see Push) and returns it.
func (s *Server) PushMessage(m Message) Update {
	return s.Push(Update{Message: &m})
}

// Pending returns the updates queued and not yet confirmed by a getUpdates
// with a higher offset.
func (s *Server) Pending() []Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.updates)
}

// Offsets returns the offset parameter of each getUpdates call so far, in
// order (0 when absent), recorded when the call arrives.
func (s *Server) Offsets() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.offsets)
}

type poll struct{ conflict chan struct{} }

// getUpdates answers at once when updates are pending, else holds the
// request up to timeout seconds. A newer getUpdates ends a held one with
// 409, as the real API does.
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, q *request) {
	offset, _ := q.int("offset")
	limit, _ := q.int("limit")
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout, _ := q.int("timeout")
	var allowed []string
	badAllowed := q.has("allowed_updates") && json.Unmarshal([]byte(q.str("allowed_updates")), &allowed) != nil

	s.mu.Lock()
	s.offsets = append(s.offsets, int(offset))
	s.notify()
	var me *poll
	answer := func(result any, e *apiError) {
		if me != nil && s.poll == me {
			s.poll = nil
		}
		s.record("getUpdates", q, e)
		s.mu.Unlock()
		writeAnswer(w, result, e)
	}
	if e := s.takeFailure("getUpdates"); e != nil {
		answer(nil, e)
		return
	}
	if badAllowed {
		answer(nil, badRequest("can't parse allowed updates JSON array"))
		return
	}
	if s.webhook != "" {
		answer(nil, &apiError{code: 409, desc: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"})
		return
	}
	if q.has("allowed_updates") {
		s.allowed = allowed // persists for later calls, like the real API
	}
	s.confirm(int(offset))
	if s.poll != nil {
		close(s.poll.conflict)
	}
	me = &poll{conflict: make(chan struct{})}
	s.poll = me

	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(time.Duration(timeout) * time.Second)
		defer t.Stop()
		timer = t.C
	}
	for {
		ups := s.deliverable(int(limit))
		if len(ups) > 0 || timer == nil {
			answer(ups, nil)
			return
		}
		pushed := s.pushed
		s.mu.Unlock()
		select {
		case <-pushed:
			s.mu.Lock()
		case <-me.conflict:
			s.mu.Lock()
			answer(nil, &apiError{code: 409, desc: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"})
			return
		case <-r.Context().Done():
			s.mu.Lock()
			timer = nil
		case <-s.done:
			s.mu.Lock()
			timer = nil
		case <-timer:
			s.mu.Lock()
			timer = nil
		}
	}
}

// confirm forgets the updates an offset confirms; s.mu must be held.
func (s *Server) confirm(offset int) {
	if offset < 0 { // the last -offset updates; the others are forgotten
		s.updates = s.updates[max(0, len(s.updates)+offset):]
		return
	}
	i := 0
	for i < len(s.updates) && s.updates[i].UpdateID < offset {
		i++
	}
	s.updates = s.updates[i:]
}

// deliverable returns up to limit queued updates of allowed types, dropping
// the others; s.mu must be held.
func (s *Server) deliverable(limit int) []Update {
	s.updates = slices.DeleteFunc(s.updates, func(u Update) bool {
		return len(s.allowed) > 0 && !slices.Contains(s.allowed, u.kind())
	})
	out := []Update{}
	for _, u := range s.updates {
		if len(out) == limit {
			break
		}
		out = append(out, u)
	}
	return out
}
