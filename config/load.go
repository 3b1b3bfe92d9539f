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

	"github.com/deerflow/deerflow/internal/yamlstruct"
)

// DefaultPath is the file read when no --config flag is given, if present.
const DefaultPath = "config.yaml"

// Error is one problem with a configuration. Load, Parse and Validate
// return every problem at once, as an errors.Join of *Error values (use
// errors.As on each, or just print the joined error: one problem a line).
// Msg never contains the value of a token, key or secret.
type Error = yamlstruct.Error

// source remembers where a Config came from, so Validate can cite lines
// and defaults can tell an explicit false from an absent key.
type source = yamlstruct.Source

// Resolve implements the --config contract shared by serve, chat and check:
// a flagPath that is not "" must name a readable file; otherwise
// ./config.yaml is read if it exists, else Default() is returned with
// usedPath "". The Config is not yet validated: call Validate. As with
// Parse, a Config may come back with an error: call its Validate to hear
// of every problem at once.
func Resolve(flagPath string) (cfg *Config, usedPath string, err error) {
	if flagPath != "" {
		cfg, err = Load(flagPath)
		return cfg, flagPath, err
	}
	cfg, err = Load(DefaultPath)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), "", nil
	}
	return cfg, DefaultPath, err
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
//
// When the only problems are unknown keys or values of the wrong type,
// the Config is returned with them, holding every other value; its
// Validate reports them together with its own, so one run names them all.
// A file that is not YAML returns a nil Config.
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
	c := &Config{src: yamlstruct.NewSource(name)}
	if len(root.Content) > 0 {
		c.src.Errs = yamlstruct.Decode(root.Content[0], reflect.ValueOf(c).Elem(), c.src, lookup)
	}
	c.applyDefaults(lookup)
	return c, errors.Join(c.src.Errs...)
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
		if l, ok := c.src.Lines[p]; ok {
			return l
		}
	}
	return 0
}

// given reports whether key path was written with a non-empty value.
func (c *Config) given(path string) bool { return c.src != nil && c.src.Given[path] }

func parentKey(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '.' || p[i] == '[' {
			return p[:i]
		}
	}
	return ""
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
