package config

func mapLookup(env map[string]string) lookupFunc {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}
