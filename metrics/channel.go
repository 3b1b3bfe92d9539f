package metrics

import "time"

// Channel records one chat channel's traffic. Get it once, when the
// channel is built (Metrics.Channel), and keep it: its methods do no map
// lookups and no allocation. A nil *Channel does nothing.
type Channel struct {
	m           *Metrics
	inbound     *counter
	sent        [3][2]*counter // sendKinds × ok, error
	waits       *counter
	waitSeconds *counter
}

// Channel returns the recorder of the channel called name ("telegram",
// "slack", ...); nil when m is nil.
func (m *Metrics) Channel(name string) *Channel {
	if m == nil {
		return nil
	}
	if c, ok := m.channels.Load(name); ok {
		return c.(*Channel)
	}
	c := &Channel{
		m:           m,
		inbound:     m.inbound.with(name),
		waits:       m.waits.with(name),
		waitSeconds: m.waitSeconds.with(name),
	}
	for i, k := range sendKinds {
		c.sent[i][0] = m.sent.with(name, k, "ok")
		c.sent[i][1] = m.sent.with(name, k, "error")
	}
	got, _ := m.channels.LoadOrStore(name, c)
	return got.(*Channel)
}

// Inbound counts a message from a person that the channel accepted.
func (c *Channel) Inbound() {
	if c == nil {
		return
	}
	c.inbound.Inc()
}

// Sent counts one delivery to the platform of kind (SendMessage, SendEdit,
// SendFile), failed when err is not nil (which also counts an ErrSend
// error). Deliveries the channel does not make (text deltas it ignores)
// are not counted.
func (c *Channel) Sent(kind string, err error) {
	if c == nil {
		return
	}
	i := 0
	switch kind {
	case SendEdit:
		i = 1
	case SendFile:
		i = 2
	}
	if err != nil {
		c.sent[i][1].Inc()
		c.m.Error(ErrSend)
		return
	}
	c.sent[i][0].Inc()
}

// RateLimitWait counts a send that waited d for a rate limit (the
// channel's own spacing, or the platform's retry-after). d ≤ 0 is not a
// wait and is not counted.
func (c *Channel) RateLimitWait(d time.Duration) {
	if c == nil || d <= 0 {
		return
	}
	c.waits.Inc()
	c.waitSeconds.Add(d.Seconds())
}

// Error counts an error of kind (usually ErrChannel or ErrStore).
func (c *Channel) Error(kind string) {
	if c == nil {
		return
	}
	c.m.Error(kind)
}
