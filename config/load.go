package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// DefaultPath is the file read when no --config flag is given, if present.
const DefaultPath = "config.yaml"

// Error is one problem with a configuration. Load, Parse and Validate
// return every problem at once, as an errors.Join of *Error values (use
// errors.As on each, or just print the joined error: one problem a line).
// Msg never contains the value of a token, key or secret.
type Error struct {
	File string // as given to Load or Parse; "" when unknown
	Line int    // 1-based; 0 when unknown (e.g. a default or a missing key)
	Key  string // key path such as "models[1].name"; "" when Msg names it
	Msg  string
}

func (e *Error) Error() string {
	var b bytes.Buffer
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// source remembers where a Config came from, so Validate can cite lines and
// defaults can tell an explicit false from an absent key.
type source struct {
	file  string
	lines map[string]int  // key path → line of the key (or list item)
	given map[string]bool // key path → a non-empty value was written
}

// Resolve implements the --config contract shared by serve, chat and check:
// a flagPath that is not "" must name a readable file; otherwise
// ./config.yaml is read if it exists, else Default() is returned with
// usedPath "". The Config is not yet validated: call Validate.
func Resolve(flagPath string) (cfg *Config, usedPath string, err error) {
	if flagPath != "" {
		cfg, err = Load(flagPath)
		return cfg, flagPath, err
	}
	cfg, err = Load(DefaultPath)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return cfg, DefaultPath, nil
}

// Load reads and parses the file at path (see Parse). Errors name the path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(data, path)
}

// Parse parses YAML config text. name labels errors ("config.yaml:12: ...").
//
// Environment variables ($VAR, ${VAR}, ${VAR:-default}; $$ for a literal $)
// are expanded in every scalar value, never in keys, after YAML parsing: a
// variable's value is always one scalar and cannot inject structure. For a
// number or bool an empty value (an unset variable) means the key is absent.
// Unknown keys and values of the wrong type are errors, all reported at
// once. Defaults are then applied (see config.yaml.example). The result is
// not validated: call Validate.
func Parse(data []byte, name string) (*Config, error) {
	return parse(data, name, os.LookupEnv)
}

// Default returns the built-in configuration: every default, plus one model
// taken from OPENAI_MODEL, OPENAI_BASE_URL and OPENAI_API_KEY.
func Default() *Config {
	c, err := parse(nil, "", os.LookupEnv)
	if err != nil {
		panic("config: defaults: " + err.Error()) // cannot happen: no input
	}
	return c
}

func parse(data []byte, name string, lookup lookupFunc) (*Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", label(name), err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, &Error{File: name, Line: extra.Line, Msg: "only one YAML document is allowed"}
	}
	c := &Config{src: &source{file: name, lines: map[string]int{}, given: map[string]bool{}}}
	d := &decoder{src: c.src, lookup: lookup}
	if len(root.Content) > 0 {
		d.value(root.Content[0], reflect.ValueOf(c).Elem(), "")
	}
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	c.applyDefaults(lookup)
	return c, nil
}

func label(name string) string {
	if name == "" {
		return "config"
	}
	return name
}

// line returns the line of key path, or of its nearest written parent.
func (c *Config) line(path string) int {
	if c.src == nil {
		return 0
	}
	for p := path; p != ""; p = parentKey(p) {
		if l, ok := c.src.lines[p]; ok {
			return l
		}
	}
	return 0
}

// given reports whether key path was written with a non-empty value.
func (c *Config) given(path string) bool { return c.src != nil && c.src.given[path] }

func parentKey(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '.' || p[i] == '[' {
			return p[:i]
		}
	}
	return ""
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
