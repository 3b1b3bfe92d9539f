// Package tokens is what a conversation's tokens are worth and how many it
// used today: model prices and their cost, and the daily record the token
// budget is checked against.
package tokens

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/deerflow/deerflow/store"
)

// Price is what a model's tokens cost, in US dollars per million (the
// price_in and price_out of its config); 0 is unknown.
type Price struct {
	In, Out float64
}

// Cost is what prompt (input) and completion (output) tokens cost at p,
// in US dollars.
func (p Price) Cost(prompt, completion int64) float64 {
	return float64(prompt)*p.In/1e6 + float64(completion)*p.Out/1e6
}

// CostText writes US dollars for people: "$0.0123", "$1.25", "$123.40";
// a cost below a hundredth of a cent is "<$0.0001".
func CostText(usd float64) string {
	switch {
	case usd <= 0:
		return "$0"
	case usd < 0.0001:
		return "<$0.0001"
	case usd < 0.99995: // what rounds to $1.0000 is $1.00
		return "$" + strconv.FormatFloat(usd, 'f', 4, 64)
	}
	return "$" + strconv.FormatFloat(usd, 'f', 2, 64)
}

// CountText writes a token count for people: "850", "12.3k", "4.5M".
func CountText(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 999_950: // what rounds to 1000.0k is 1.0M
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

// Daily is one conversation's tokens on one UTC day.
type Daily struct {
	Day    string `json:"day"` // 2006-01-02, UTC
	Tokens int64  `json:"tokens"`
}

func dailyKey(chatKey string) string { return "tokens:" + chatKey }

// ReadDaily returns the conversation's last recorded day (zero if none, or
// unreadable: the day starts afresh).
func ReadDaily(tx *store.Tx, chatKey string) (Daily, error) {
	var d Daily
	v, err := tx.State(dailyKey(chatKey))
	if errors.Is(err, store.ErrNotFound) || (err == nil && v == nil) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(v, &d); err != nil {
		return Daily{}, nil
	}
	return d, nil
}

// Today returns the tokens the conversation used today (UTC).
func Today(tx *store.Tx, chatKey string, now time.Time) int64 {
	d, err := ReadDaily(tx, chatKey)
	if err != nil || d.Day != now.UTC().Format(time.DateOnly) {
		return 0
	}
	return d.Tokens
}

// AddToday adds n tokens to the conversation's day (now, UTC).
func AddToday(tx *store.Tx, chatKey string, now time.Time, n int64) error {
	d, err := ReadDaily(tx, chatKey)
	if err != nil {
		return err
	}
	if today := now.UTC().Format(time.DateOnly); d.Day != today {
		d = Daily{Day: today}
	}
	d.Tokens += n
	v, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return tx.PutState(dailyKey(chatKey), v)
}
