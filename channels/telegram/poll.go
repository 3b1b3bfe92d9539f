package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
)

// apiError is a Bot API error reply.
type apiError struct {
	Code        int
	Description string
	RetryAfter  int
}

func (e *apiError) Error() string {
	return fmt.Sprintf("telegram: %d %s", e.Code, e.Description)
}

// poll long-polls getUpdates. An update is confirmed to Telegram (by
// asking for the next offset) only after it was handled: its message is
// stored by the bus, or it was ignored.
//
// The updates of one batch are handled chat by chat, each chat's in order
// and the chats side by side, so their intake shares commits: a batch of a
// hundred updates costs about one fsync rather than a hundred in a row.
//
// Telegram itself remembers which updates were confirmed, and the bus
// drops an update it has already stored, so the offset kept in the store
// is only where a restart starts asking: it is saved at most every
// offsetSaveEvery and when polling stops, never on a message's path.
const offsetSaveEvery = 10 * time.Second

func (c *Channel) poll(ctx context.Context, b bus.Publisher) error {
	offset := c.loadOffset()
	saved, savedAt := offset, time.Now()
	defer func() {
		if offset != saved {
			c.saveOffset(offset)
		}
	}()
	delay := time.Duration(0)
	short := false    // after a failed poll, one that returns at once shows the recovery
	unhooked := false // deleteWebhook asked (once: see failed)
	for {
		if delay > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(delay):
			}
		}
		updates, err := c.getUpdates(ctx, offset+1, short)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if delay, err = c.failed(ctx, err, delay, &unhooked); err != nil {
				return err
			}
			short = delay > 0
			continue
		}
		c.link.Set(true, "polling")
		short = false
		delay = 0
		if handled, ok := c.handleBatch(ctx, b, offset, updates); handled != offset || !ok {
			offset = handled
			if !ok {
				delay = time.Second
			}
		}
		if offset != saved && time.Since(savedAt) >= offsetSaveEvery {
			c.saveOffset(offset)
			saved, savedAt = offset, time.Now()
		}
	}
}

// failed judges a failed getUpdates: a rejected token ends polling (the
// error); otherwise it returns how long to wait before the next poll.
//
// A webhook set on the bot (by another program, or an earlier webhook
// deployment) makes Telegram refuse polling with 409: it is deleted the
// first time that happens, and polling goes on at once. Asking only then
// saves every start a round trip before the first poll.
func (c *Channel) failed(ctx context.Context, err error, delay time.Duration, unhooked *bool) (time.Duration, error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae) && ae.Code == http.StatusUnauthorized:
		return 0, fmt.Errorf("%s: the bot token was rejected; check %s.bot_token", c.o.Name, c.o.Key)
	case errors.As(err, &ae) && ae.RetryAfter > 0:
		c.log.Warn("getUpdates rate limited", "retry_after", ae.RetryAfter)
		return time.Duration(ae.RetryAfter) * time.Second, nil
	case errors.As(err, &ae) && ae.Code == http.StatusConflict && strings.Contains(ae.Description, "webhook") && !*unhooked:
		*unhooked = true
		c.log.Info("a webhook is set on the bot; deleting it to poll for updates")
		if _, err := c.bot.DeleteWebhook(ctx, &tgbot.DeleteWebhookParams{}); err != nil {
			c.log.Warn("deleteWebhook failed; polling may conflict with a webhook", "err", err)
		}
		return 0, nil
	}
	delay = min(max(delay*2, time.Second), 30*time.Second)
	c.log.Warn("getUpdates failed", "err", err, "retry_in", delay)
	c.link.Set(false, "getUpdates failed: "+failure(err))
	c.met.Error(metrics.ErrChannel)
	return delay, nil
}

// handleBatch hands one getUpdates batch to the bus: each chat's updates
// in order, the chats concurrently. It returns the highest update id up to
// which every update was handled (from, if none was), and false if one
// could not be: it and everything after it are asked for again (the bus
// drops those it already stored).
func (c *Channel) handleBatch(ctx context.Context, b bus.Publisher, from int64, updates []*models.Update) (int64, bool) {
	byChat := map[int64][]*models.Update{}
	var order []int64
	for _, u := range updates {
		if u == nil {
			continue // "result":[null]: nothing to handle or confirm
		}
		k := chatOf(u)
		if _, ok := byChat[k]; !ok {
			order = append(order, k)
		}
		byChat[k] = append(byChat[k], u)
	}
	failed := make(chan int64, len(order)) // the first update of a chat that could not be handled
	chat := func(k int64) {
		for _, u := range byChat[k] {
			if err := c.handle(ctx, b, u); err != nil {
				// Not stored: leave it unconfirmed and ask again.
				c.log.Error("could not accept an update; it will be redelivered", "update", u.ID, "err", err)
				c.met.Error(metrics.ErrStore)
				failed <- u.ID
				return
			}
		}
	}
	if len(order) == 1 {
		chat(order[0]) // one chat (the usual batch): no goroutine to hand it to
	} else {
		var wg sync.WaitGroup
		for _, k := range order {
			wg.Go(func() { chat(k) })
		}
		wg.Wait()
	}
	close(failed)
	first := int64(math.MaxInt64)
	for id := range failed {
		first = min(first, id)
	}
	handled := from
	for _, u := range updates {
		if u != nil && u.ID < first {
			handled = max(handled, u.ID)
		}
	}
	return handled, first == math.MaxInt64
}

// chatOf is the chat an update belongs to, or 0 for one without a message.
func chatOf(u *models.Update) int64 {
	if u.Message != nil {
		return u.Message.Chat.ID
	}
	return 0
}

// loadOffset and saveOffset keep the last update id handled in the store,
// under the channel's name: each bot has its own update ids.
func (c *Channel) loadOffset() int64 {
	var off int64
	if c.o.Store == nil {
		return 0
	}
	c.o.Store.View(func(tx *store.Tx) error {
		v, err := tx.State(c.o.Name + ":offset")
		if err == nil {
			off, _ = strconv.ParseInt(string(v), 10, 64)
		}
		return nil
	})
	return off
}

func (c *Channel) saveOffset(off int64) {
	if c.o.Store == nil {
		return
	}
	err := c.o.Store.Batch(func(tx *store.Tx) error {
		return tx.PutState(c.o.Name+":offset", []byte(strconv.FormatInt(off, 10)))
	})
	if err != nil {
		// Harmless: the updates come again and are dropped as duplicates.
		c.log.Error("saving the update offset", "err", err)
		c.met.Error(metrics.ErrStore)
	}
}

// getUpdates makes one long-poll request (short: one that returns at
// once).
func (c *Channel) getUpdates(ctx context.Context, offset int64, short bool) ([]*models.Update, error) {
	timeout := int(c.o.PollTimeout.Seconds())
	if short {
		timeout = 0
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("offset", strconv.FormatInt(offset, 10))
	w.WriteField("timeout", strconv.Itoa(timeout))
	w.WriteField("allowed_updates", `["message","callback_query"]`)
	w.Close()
	url := c.o.APIURL + "/bot" + c.o.Token + "/getUpdates"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, &body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, scrub(err, c.o.Token)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, scrub(err, c.o.Token)
	}
	var r struct {
		OK          bool             `json:"ok"`
		Result      []*models.Update `json:"result"`
		ErrorCode   int              `json:"error_code"`
		Description string           `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("telegram: getUpdates: HTTP %d, undecodable reply", resp.StatusCode)
	}
	if !r.OK {
		return nil, &apiError{Code: r.ErrorCode, Description: r.Description, RetryAfter: r.Parameters.RetryAfter}
	}
	return r.Result, nil
}

// failure says briefly why a Bot API call failed, for Health: the API's
// error, or that it could not be reached. Never the URL (it holds the
// token).
func failure(err error) string {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return fmt.Sprintf("%d %s", ae.Code, ae.Description)
	case errors.Is(err, tgbot.ErrorUnauthorized), errors.Is(err, tgbot.ErrorNotFound):
		return "the bot token was rejected"
	}
	return "no answer from the Bot API"
}

// scrub removes the token from an error (URLs in net/http errors carry it).
func scrub(err error, token string) error {
	msg := err.Error()
	if token != "" && bytes.Contains([]byte(msg), []byte(token)) {
		return errors.New(string(bytes.ReplaceAll([]byte(msg), []byte(token), []byte("<token>"))))
	}
	return err
}
