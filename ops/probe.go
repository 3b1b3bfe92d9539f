package ops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/metrics"
)

// checkModel tells whether a model's provider is reachable without
// spending tokens: a real call within Options.Recent says so; otherwise a
// probe (GET {base_url}/models), whose result is kept for Options.Cache.
func (s *Server) checkModel(ctx context.Context, p *probe) ModelState {
	if c, ok := s.o.Metrics.LastModelCall(p.model.Name); ok {
		if age := time.Since(c.At); age < s.o.Recent {
			return fromCall(c.Result, age)
		}
	}
	return p.get(ctx)
}

// fromCall reads a real call's result as the provider's state.
func fromCall(result string, age time.Duration) ModelState {
	ago := fmt.Sprintf(" (a request %s ago)", age.Round(time.Second))
	switch result {
	case metrics.OK:
		return ModelState{Reachable: true, Detail: "answered" + ago}
	case metrics.Refused:
		return ModelState{Reachable: true, Detail: "answered with an error about the request" + ago}
	case metrics.RateLimited:
		return ModelState{Reachable: true, Detail: "rate limited" + ago}
	case metrics.ServerError:
		return ModelState{Detail: "server error (5xx)" + ago}
	case metrics.Rejected:
		return ModelState{Detail: "rejected the API key" + ago}
	}
	return ModelState{Detail: "unreachable" + ago}
}

// probe checks one model's provider. Its mutex is held for the whole
// probe, so probes of a model never overlap: a check arriving meanwhile
// waits and takes the fresh result.
type probe struct {
	model   Model
	client  *http.Client
	timeout time.Duration
	ttl     time.Duration

	mu    sync.Mutex
	at    time.Time // when state was probed; zero: never
	state ModelState
}

func (p *probe) get(ctx context.Context) ModelState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && time.Since(p.at) < p.ttl {
		return p.state
	}
	// The probe outlives a caller that gives up: its result is cached
	// for the next one, and must not say "canceled".
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout)
	defer cancel()
	p.state = p.run(ctx)
	p.at = time.Now()
	return p.state
}

// run asks GET {base_url}/models: any answer below 500 but 401/403 means
// the provider is there and takes the key.
func (p *probe) run(ctx context.Context) ModelState {
	u := strings.TrimRight(p.model.BaseURL, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return ModelState{Detail: "base_url is not a valid URL"}
	}
	if p.model.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.model.APIKey)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return ModelState{Detail: p.scrub("unreachable: " + reason(ctx, err, p.timeout))}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return ModelState{Detail: fmt.Sprintf("rejected the API key (HTTP %d)", code)}
	case code >= 500:
		return ModelState{Detail: fmt.Sprintf("server error (HTTP %d)", code)}
	default:
		return ModelState{Reachable: true, Detail: fmt.Sprintf("answered a probe (HTTP %d)", code)}
	}
}

// reason is why a request got no answer, without its URL.
func reason(ctx context.Context, err error, timeout time.Duration) string {
	if ctx.Err() != nil {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// scrub keeps the key out of a detail, whatever an error said.
func (p *probe) scrub(s string) string {
	if p.model.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, p.model.APIKey, "<key>")
}
