package store

import "sync/atomic"

// Stats are counters of a Store's work since Open, for benchmarks and
// metrics. Reading them is cheap and never blocks a transaction.
type Stats struct {
	// Commits is how many write transactions committed: Update calls and
	// Batch's shared commits (a Batch commit holding many calls counts
	// once). Without Options.NoSync, bbolt fsyncs the file twice in each
	// (after the data pages, after the meta page), and once more when the
	// file grows. Schema migrations at Open are not counted.
	Commits uint64
}

// counters are the Store's side of Stats.
type counters struct {
	commits atomic.Uint64
}

// Stats returns the Store's counters so far.
func (s *Store) Stats() Stats {
	return Stats{Commits: s.counters.commits.Load()}
}
