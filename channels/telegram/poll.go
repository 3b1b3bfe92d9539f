package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
)

const offsetKey = "telegram:offset" // last update id handled, in the store

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
// stored by the bus, or it was ignored. The last handled id is kept in the
// store, so a restart neither repeats nor loses updates.
func (c *Channel) poll(ctx context.Context, b bus.Publisher) error {
	offset := c.loadOffset()
	delay := time.Duration(0)
	short := false // after a failed poll, one that returns at once shows the recovery
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
		var ae *apiError
		switch {
		case errors.As(err, &ae) && ae.Code == http.StatusUnauthorized:
			return fmt.Errorf("telegram: the bot token was rejected; check channels.telegram.bot_token")
		case errors.As(err, &ae) && ae.RetryAfter > 0:
			delay = time.Duration(ae.RetryAfter) * time.Second
			c.log.Warn("getUpdates rate limited", "retry_after", ae.RetryAfter)
			continue
		case err != nil:
			delay = min(max(delay*2, time.Second), 30*time.Second)
			c.log.Warn("getUpdates failed", "err", err, "retry_in", delay)
			c.link.Set(false, "getUpdates failed: "+failure(err))
			c.met.Error(metrics.ErrChannel)
			short = true
			continue
		}
		c.link.Set(true, "polling")
		short = false
		delay = 0
		handled := offset
		for _, u := range updates {
			if u == nil {
				continue // "result":[null]: nothing to handle or confirm
			}
			if err := c.handle(ctx, b, u); err != nil {
				// Not stored: leave it unconfirmed and ask again.
				c.log.Error("could not accept an update; it will be redelivered", "update", u.ID, "err", err)
				c.met.Error(metrics.ErrStore)
				delay = time.Second
				break
			}
			handled = u.ID
		}
		if handled != offset {
			offset = handled
			c.saveOffset(offset)
		}
	}
}

func (c *Channel) loadOffset() int64 {
	var off int64
	if c.o.Store == nil {
		return 0
	}
	c.o.Store.View(func(tx *store.Tx) error {
		v, err := tx.State(offsetKey)
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
		return tx.PutState(offsetKey, []byte(strconv.FormatInt(off, 10)))
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
	w.WriteField("allowed_updates", `["message"]`)
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
