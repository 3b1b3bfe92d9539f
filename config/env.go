package config

import "strings"

// EnvVar is an environment variable that fills a key the file leaves out
// (with no config file: every key below), so a container can be set up by
// its environment alone. A value written in the file always wins.
type EnvVar struct {
	Name string // e.g. DEERFLOW_TELEGRAM_ALLOWED_USERS
	Key  string // the key it fills, e.g. channels.telegram.allowed_users
}

// EnvVars lists them in the order README.md's table does. The OPENAI_*
// ones make the one model of a config without a models list; a channel
// token or app id given by the environment switches its channel on unless
// the file says enabled. Allow-lists are comma-separated.
var EnvVars = []EnvVar{
	{"OPENAI_API_KEY", "models[0].api_key"},
	{"OPENAI_BASE_URL", "models[0].base_url"},
	{"OPENAI_MODEL", "models[0].model"},
	{"DEERFLOW_DATA_DIR", "data_dir"},
	{"DEERFLOW_HTTP_LISTEN", "http.listen"},
	{"DEERFLOW_API_TOKEN", "http.api_token"},
	{"TELEGRAM_BOT_TOKEN", "channels.telegram.bot_token"},
	{"DEERFLOW_TELEGRAM_ALLOWED_USERS", "channels.telegram.allowed_users"},
	{"SLACK_BOT_TOKEN", "channels.slack.bot_token"},
	{"SLACK_APP_TOKEN", "channels.slack.app_token"},
	{"DEERFLOW_SLACK_ALLOWED_USERS", "channels.slack.allowed_users"},
	{"LARK_APP_ID", "channels.lark.app_id"},
	{"LARK_APP_SECRET", "channels.lark.app_secret"},
	{"DEERFLOW_LARK_ALLOWED_USERS", "channels.lark.allowed_users"},
}

// envVarOf is the variable that fills key, or "".
func envVarOf(key string) string {
	for _, e := range EnvVars {
		if e.Key == key {
			return e.Name
		}
	}
	return ""
}

// envDefaults fills the keys of EnvVars (but the models) that the file
// leaves empty, and switches on a channel whose credentials came from the
// environment when the file does not say enabled. A variable that is
// unset leaves its key empty and is remembered, so a message can name it.
func (c *Config) envDefaults(lookup lookupFunc) {
	tg, sl, lk := &c.Channels.Telegram, &c.Channels.Slack, &c.Channels.Lark
	c.fromEnv("data_dir", &c.DataDir, lookup)
	c.fromEnv("http.listen", &c.HTTP.Listen, lookup)
	c.fromEnv("http.api_token", &c.HTTP.APIToken, lookup)
	tgEnv := c.fromEnv("channels.telegram.bot_token", &tg.BotToken, lookup)
	slEnv := c.fromEnv("channels.slack.bot_token", &sl.BotToken, lookup)
	slEnv = c.fromEnv("channels.slack.app_token", &sl.AppToken, lookup) || slEnv
	lkEnv := c.fromEnv("channels.lark.app_id", &lk.AppID, lookup)
	lkEnv = c.fromEnv("channels.lark.app_secret", &lk.AppSecret, lookup) || lkEnv
	c.switchOn("channels.telegram", &tg.Enabled, tgEnv)
	c.switchOn("channels.slack", &sl.Enabled, slEnv)
	c.switchOn("channels.lark", &lk.Enabled, lkEnv)
	c.usersFromEnv("channels.telegram.allowed_users", &tg.AllowedUsers, lookup)
	c.usersFromEnv("channels.slack.allowed_users", &sl.AllowedUsers, lookup)
	c.usersFromEnv("channels.lark.allowed_users", &lk.AllowedUsers, lookup)
}

// fromEnv sets *p from key's variable when *p is empty, and reports
// whether it did.
func (c *Config) fromEnv(key string, p *string, lookup lookupFunc) bool {
	if *p != "" {
		return false
	}
	name := envVarOf(key)
	v, _ := lookup(name)
	if v = strings.TrimSpace(v); v == "" {
		c.noteUnset(key, name)
		return false
	}
	*p = v
	return true
}

// switchOn sets a channel's enabled when the environment gave its
// credentials and the file does not say (or says $VAR, unset).
func (c *Config) switchOn(key string, enabled *bool, fromEnv bool) {
	if fromEnv && !c.given(key+".enabled") { // enabled: $UNSET counts as absent
		*enabled = true
	}
}

// usersFromEnv fills an empty allow-list from its variable,
// comma-separated.
func (c *Config) usersFromEnv(key string, p *[]string, lookup lookupFunc) {
	if len(*p) > 0 { // an allow-list from the environment only ever narrows
		return
	}
	v, _ := lookup(envVarOf(key))
	for _, u := range strings.Split(v, ",") {
		if u = strings.TrimSpace(u); u != "" {
			*p = append(*p, u)
		}
	}
}

// noteUnset remembers that key's value would have come from the unset
// variable name, unless the file already named one there.
func (c *Config) noteUnset(key, name string) {
	if c.src != nil && len(c.src.Unset[key]) == 0 {
		c.src.Unset[key] = []string{name}
	}
}

// unset is the variables key's value named that were unset, as "$A"
// or "$A and $B"; "" when none.
func (c *Config) unset(key string) string {
	if c.src == nil || len(c.src.Unset[key]) == 0 {
		return ""
	}
	names := make([]string, len(c.src.Unset[key]))
	for i, n := range c.src.Unset[key] {
		names[i] = "$" + n
	}
	return strings.Join(names, " and ")
}

// written reports whether key was written in the file, whatever its value.
func (c *Config) written(key string) bool { return c.src != nil && c.src.Lines[key] > 0 }
