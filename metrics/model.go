package metrics

import (
	"sync/atomic"
	"time"
)

// ModelCallInfo is what the latest real call to a model showed.
type ModelCallInfo struct {
	At     time.Time // when it ended
	Result string    // OK, Refused, RateLimited, ServerError, Unreachable or Rejected
}

// model holds one configured model's series and its latest call.
type model struct {
	ok         *histogram // the duration of successful calls
	prompt     *counter
	completion *counter
	last       atomic.Pointer[ModelCallInfo]
}

func (m *Metrics) model(name string) *model {
	if v, ok := m.models.Load(name); ok {
		return v.(*model)
	}
	md := &model{
		ok:         m.modelSeconds.with(name, OK),
		prompt:     m.tokens.with(name, "prompt"),
		completion: m.tokens.with(name, "completion"),
	}
	v, _ := m.models.LoadOrStore(name, md)
	return v.(*model)
}

// ModelCall records one model request of the configured model called name:
// how long it took and its result (OK, Unreachable, ...), and the tokens the
// provider reported. A failed call (other than Canceled) also counts an
// ErrModel error. The result is remembered for /healthz (LastModelCall).
func (m *Metrics) ModelCall(name, result string, d time.Duration, promptTokens, completionTokens int) {
	if m == nil {
		return
	}
	md := m.model(name)
	result = known(result, results)
	if result == OK {
		md.ok.Observe(d.Seconds())
	} else {
		m.modelSeconds.with(name, result).Observe(d.Seconds())
		if result != Canceled {
			m.Error(ErrModel)
		}
	}
	if promptTokens > 0 {
		md.prompt.Add(float64(promptTokens))
	}
	if completionTokens > 0 {
		md.completion.Add(float64(completionTokens))
	}
	if result != Canceled { // says nothing about the provider
		md.last.Store(&ModelCallInfo{At: time.Now(), Result: result})
	}
}

// LastModelCall returns the latest call to the model called name that
// reached a verdict about the provider (a canceled call does not); ok is
// false when there was none.
func (m *Metrics) LastModelCall(name string) (info ModelCallInfo, ok bool) {
	if m == nil {
		return ModelCallInfo{}, false
	}
	v, found := m.models.Load(name)
	if !found {
		return ModelCallInfo{}, false
	}
	p := v.(*model).last.Load()
	if p == nil {
		return ModelCallInfo{}, false
	}
	return *p, true
}
