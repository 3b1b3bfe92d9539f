package config

import "strings"

// Warnings returns what is allowed but probably not meant, as Validate
// reports problems (an *Error each, naming the key): an enabled channel
// with no allow-list, which anyone who finds the bot may use, tools and
// all; a model key written as a variable that is not set, for a server
// that may not need one. `deerflow check` prints them apart from errors
// and still exits 0; serve logs the channel ones when it starts.
func (c *Config) Warnings() []error {
	v := &validator{c: c}
	for _, in := range c.ChannelInstances() {
		if len(in.AllowedUsers) > 0 {
			continue
		}
		how := in.Key + ".allowed_users"
		if e := envVarOf(how); e != "" {
			how += " or " + e
		}
		v.fail(in.Key+".allowed_users", "channel %s is open to everyone: anyone who finds the bot can use it and its tools; list who may in %s", in.Name, how)
	}
	for i, m := range c.Models {
		k := index("models", i) + ".api_key"
		if m.APIKey == "" && c.written(k) && !needsKey(m.BaseURL) {
			if u := c.unset(k); u != "" {
				v.fail(k, "%s", strings.TrimSuffix(v.missing(k, ""), " ()")+": requests to "+m.Name+" go without a key")
			}
		}
	}
	return v.errs
}
