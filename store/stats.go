package store

// Stats are counters of a Store's work since Open, for benchmarks and
// metrics; reading them never blocks a transaction.
type Stats struct {
	// Commits is how many write transactions committed: Update calls and
	// Batch's shared commits, each once (bbolt fsyncs twice in each
	// without Options.NoSync). Migrations at Open are not counted.
	Commits uint64
}

// Stats returns the Store's counters so far.
func (s *Store) Stats() Stats { return Stats{Commits: s.commits.Load()} }
