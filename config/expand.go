package config

import "github.com/deerflow/deerflow/internal/envvar"

// lookupFunc reports an environment variable's value and whether it is set.
type lookupFunc = envvar.Lookup

// expand expands environment references in a value (see envvar.Expand).
func expand(s string, lookup lookupFunc) (string, error) { return envvar.Expand(s, lookup) }
