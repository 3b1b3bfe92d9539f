package config

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/internal/yamlstruct"
)

const examplePath = "../config.yaml.example"

var exampleEnv = map[string]string{
	"OPENAI_API_KEY":          "sk-test",
	"TELEGRAM_BOT_TOKEN":      "123:abc",
	"SLACK_BOT_TOKEN":         "xoxb-test",
	"SLACK_APP_TOKEN":         "xapp-test",
	"LARK_APP_ID":             "cli_test",
	"LARK_APP_SECRET":         "secret",
	"GITHUB_TOKEN":            "ghp_test",
	"DOCS_MCP_TOKEN":          "docs",
	"TELEGRAM_SUPPORT_TOKEN":  "456:def",
	"SLACK_SUPPORT_BOT_TOKEN": "xoxb-support",
	"SLACK_SUPPORT_APP_TOKEN": "xapp-support",
	"LARK_SUPPORT_APP_ID":     "cli_support",
	"LARK_SUPPORT_APP_SECRET": "support-secret",
}

// exampleSnippet matches a commented-out example line in the example file,
// written so that deleting "# " enables it, e.g. "    # - host_path: /srv".
// Prose comments never start with a lowercase key and a colon.
var exampleSnippet = regexp.MustCompile(`(?m)^([ \t]*)# ([ \t]*(?:- )?[a-z_]+:(?:[ \t].*)?)$`)

func TestExampleLoads(t *testing.T) {
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := parse(data, examplePath, mapLookup(exampleEnv))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	// The example spells out the defaults: it must mean the same as no file.
	def, _ := parse(nil, "", mapLookup(exampleEnv))
	c.src, def.src = nil, nil
	def.Console.User = "" // from $USER, written as "" in the example
	// Without a file, a token in the environment switches its channel
	// on; the example keeps them off.
	def.Channels.Telegram.Enabled, def.Channels.Slack.Enabled, def.Channels.Lark.Enabled = false, false, false
	c.Console.User = ""
	if !reflect.DeepEqual(c, def) {
		t.Errorf("example differs from the defaults:\n got %+v\nwant %+v", c, def)
	}
}

// TestExampleCoversEveryKey keeps the example from falling behind Config:
// every key path of the struct must appear in it, live or in a commented-out
// example (which must itself be valid once enabled).
func TestExampleCoversEveryKey(t *testing.T) {
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	enabled := exampleSnippet.ReplaceAll(data, []byte("$1$2"))
	c, err := parse(enabled, examplePath+" (examples enabled)", mapLookup(exampleEnv))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	index := regexp.MustCompile(`\[\d+\]`)
	for p := range c.src.Lines {
		written[index.ReplaceAllString(p, "[]")] = true
	}
	var missing []string
	for _, p := range keyPaths(reflect.TypeFor[Config](), "") {
		if !written[p] {
			missing = append(missing, p)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("config.yaml.example lacks keys:\n%s", strings.Join(missing, "\n"))
	}
}

// notKeys are key paths of the types that a file may not write: a
// platform block has no name (its entries do), and an entry has no
// entries (which also ends the types' recursion).
var notKeys = map[string]bool{
	"channels.telegram.name": true, "channels.telegram.bots[].bots": true,
	"channels.slack.name": true, "channels.slack.apps[].apps": true,
	"channels.lark.name": true, "channels.lark.apps[].apps": true,
}

// keyPaths lists every yaml key path of a struct type, with [] for list items.
func keyPaths(t reflect.Type, prefix string) []string {
	var out []string
	for name, i := range yamlstruct.FieldsOf(t) {
		p := yamlstruct.JoinKey(prefix, name)
		if notKeys[p] {
			continue
		}
		out = append(out, p)
		ft := t.Field(i).Type
		if ft.Kind() == reflect.Slice {
			ft, p = ft.Elem(), p+"[]"
		}
		if ft.Kind() == reflect.Struct {
			out = append(out, keyPaths(ft, p)...)
		}
	}
	return out
}

func TestKeyPathsSeesNestedKeys(t *testing.T) {
	paths := keyPaths(reflect.TypeFor[Config](), "")
	for _, want := range []string{"channels.telegram.bot_token", "models[].max_retries", "sandbox.mounts[].read_only", "mcp.servers[].headers"} {
		if !slices.Contains(paths, want) {
			t.Errorf("keyPaths lacks %s", want)
		}
	}
}
