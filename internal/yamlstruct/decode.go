// Package yamlstruct fills a struct from a YAML node tree by reflection
// over its yaml tags, the way the config file is read: every error with a
// key path and a line, unknown keys refused, the keys written recorded,
// environment variables expanded in each scalar after parsing.
//
// It imports internal/envvar.
package yamlstruct

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/deerflow/deerflow/internal/envvar"

	"go.yaml.in/yaml/v3"
)

// Error is one problem with a document: where, which key, what.
type Error struct {
	File string // as given; "" when unknown
	Line int    // 1-based; 0 when unknown (e.g. a default or a missing key)
	Key  string // key path such as "models[1].name"; "" when Msg names it
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
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

// Source remembers where a value came from, so validation can cite lines
// and defaults can tell an explicit false from an absent key.
type Source struct {
	File  string
	Lines map[string]int  // key path → line of the key (or list item)
	Given map[string]bool // key path → a non-empty value was written
	// Unset: key path → the variables its value named (without a
	// default) that were unset or empty, so "required" can say which.
	Unset map[string][]string
	// Errs are the problems found while decoding (types, unknown keys),
	// kept so validation can report them with its own in one pass.
	Errs []error
}

// NewSource returns an empty Source for the file called file.
func NewSource(file string) *Source {
	return &Source{File: file, Lines: map[string]int{}, Given: map[string]bool{}, Unset: map[string][]string{}}
}

// expand expands the environment references of a scalar at path,
// remembering the variables that gave nothing.
func (d *decoder) expand(s, path string) (string, error) {
	v, missing, err := envvar.ExpandNamed(s, d.lookup)
	if len(missing) > 0 {
		d.src.Unset[path] = missing
	}
	return v, err
}

// Decode fills v (a struct, addressable) from node, recording keys and
// lines in src and expanding environment references with lookup; it
// returns every problem found.
func Decode(node *yaml.Node, v reflect.Value, src *Source, lookup envvar.Lookup) []error {
	d := &decoder{src: src, lookup: lookup}
	d.value(node, v, "")
	return d.errs
}

// decoder fills a Config from a YAML node tree by reflection over the yaml
// struct tags. Doing it by hand, rather than with yaml's own decoder, gives
// every error a key path and a line, rejects unknown keys, records which
// keys were written (so a default of true never overrides an explicit
// false), and expands environment variables in each scalar after parsing.
type decoder struct {
	src     *Source
	lookup  envvar.Lookup
	errs    []error
	merging map[*yaml.Node]bool // mappings being merged, to stop a << cycle
	steps   int                 // bounds alias and merge blow-up
}

// maxSteps bounds the work one file may cause through aliases and merges.
const maxSteps = 100_000

// step counts one unit of work and reports whether the budget allows it,
// failing once when it runs out.
func (d *decoder) step(n *yaml.Node, path string) bool {
	d.steps++
	if d.steps == maxSteps+1 {
		d.fail(n.Line, path, "aliases or merges expand too far")
	}
	return d.steps <= maxSteps
}

type pair struct{ key, val *yaml.Node }

func (d *decoder) fail(line int, key, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.src.File, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// value decodes n into v. A YAML null (~, null or nothing) leaves v as is,
// exactly as if the key were absent.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if !d.step(n, path) {
		return
	}
	if sv, ok := ScalarFormOf(v); ok && n.Kind == yaml.ScalarNode {
		d.switchScalar(n, sv, path)
		return
	}
	switch v.Kind() {
	case reflect.Interface:
		if a := d.anyValue(n, path); a != nil {
			v.Set(reflect.ValueOf(a))
		}
	case reflect.Struct:
		d.structure(n, v, path)
	case reflect.Slice:
		d.list(n, v, path)
	case reflect.Map:
		d.mapping(n, v, path)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if d.scalar(n, p.Elem(), path) {
			v.Set(p)
		}
	default:
		d.scalar(n, v, path)
	}
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, path, "expected a mapping, got %s", describe(n))
		return
	}
	d.src.Given[path] = true
	fields := FieldsOf(v.Type())
	for _, p := range d.pairs(n, path) {
		name := p.key.Value
		child := JoinKey(path, name)
		i, ok := fields[name]
		if !ok {
			if path == "" && strings.HasPrefix(name, "x-") {
				continue // top-level extension keys, e.g. to hold YAML anchors
			}
			d.fail(p.key.Line, "", "unknown key %q", child)
			continue
		}
		d.src.Lines[child] = p.key.Line
		d.value(p.val, v.Field(i), child)
	}
}

// list decodes a sequence. A []string also accepts one scalar holding a
// comma-separated list, so `allowed_users: $TELEGRAM_ALLOWED_USERS` works.
func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.ScalarNode && v.Type().Elem().Kind() == reflect.String {
		s, err := d.expand(n.Value, path)
		if err != nil {
			d.fail(n.Line, path, "%v", err)
			return
		}
		var items []string
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				items = append(items, f)
			}
		}
		v.Set(reflect.ValueOf(items).Convert(v.Type()))
		d.src.Given[path] = len(items) > 0
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n.Line, path, "expected a list, got %s", describe(n))
		return
	}
	d.src.Given[path] = true
	if len(n.Content) == 0 {
		return // [] leaves the list nil, the same as no key
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.src.Lines[p] = item.Line
		d.value(item, out.Index(i), p)
	}
	v.Set(out)
}

// mapping decodes a free-form map (env, headers): any keys are accepted.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, path, "expected a mapping, got %s", describe(n))
		return
	}
	d.src.Given[path] = true
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	for _, p := range d.pairs(n, path) {
		e := reflect.New(v.Type().Elem()).Elem()
		k := JoinKey(path, p.key.Value)
		d.src.Lines[k] = p.key.Line
		d.value(p.val, e, k)
		m.SetMapIndex(reflect.ValueOf(p.key.Value), e)
	}
	v.Set(m)
}

// scalar decodes one scalar into a string, bool, integer or float field,
// expanding environment variables first. For non-string fields an empty
// result (an unset variable) counts as absent. It reports whether v was set.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.ScalarNode {
		d.fail(n.Line, path, "expected %s, got %s", want(v.Kind()), describe(n))
		return false
	}
	s, err := d.expand(n.Value, path)
	if err != nil {
		d.fail(n.Line, path, "%v", err)
		return false
	}
	if v.Kind() == reflect.String {
		v.SetString(s)
		d.src.Given[path] = true
		return true
	}
	if s = strings.TrimSpace(s); s == "" {
		return false
	}
	ok := false
	switch v.Kind() {
	case reflect.Bool:
		var b bool
		if b, ok = ParseBool(s); ok {
			v.SetBool(b)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		if i, ok = parseInt(s); ok && !v.OverflowInt(i) {
			v.SetInt(i)
		} else {
			ok = false
		}
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), v.Type().Bits())
		if ok = err == nil; ok {
			v.SetFloat(f)
		}
	default:
		panic("config: unsupported field kind " + v.Kind().String())
	}
	if !ok {
		// Never the value itself: a secret pasted one line off lands here.
		d.fail(n.Line, path, "expected %s, got %s", want(v.Kind()), valueLength(s))
		return false
	}
	d.src.Given[path] = true
	return true
}

// ScalarForm is a struct that may also be written as one scalar, such as
// `thinking: on` for `thinking: {enabled: true}`: SetScalar takes the
// switch (on, off, true, false) and reports whether it was one.
type ScalarForm interface {
	SetScalar(s string) bool
}

func ScalarFormOf(v reflect.Value) (ScalarForm, bool) {
	if !v.CanAddr() {
		return nil, false
	}
	sv, ok := v.Addr().Interface().(ScalarForm)
	return sv, ok
}

// switchScalar decodes the one-scalar form of a struct, which is a switch:
// on, off, true or false. An empty result (an unset variable) is absent.
func (d *decoder) switchScalar(n *yaml.Node, sv ScalarForm, path string) {
	s, err := d.expand(n.Value, path)
	if err != nil {
		d.fail(n.Line, path, "%v", err)
		return
	}
	if s = strings.TrimSpace(s); s == "" {
		return
	}
	if !sv.SetScalar(s) {
		d.fail(n.Line, path, "expected on, off, true, false or a mapping, got %s", valueLength(s))
		return
	}
	d.src.Given[path] = true
}

// pairs returns a mapping's key/value pairs with YAML merge keys (<<)
// resolved: a key written in the mapping wins over a merged one.
func (d *decoder) pairs(n *yaml.Node, path string) []pair {
	var own, merged []pair
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
			d.fail(k.Line, path, "keys must be plain strings")
		case k.Tag == "!!merge":
			merged = append(merged, d.mergeSources(val, path)...)
		case seen[k.Value]:
			d.fail(k.Line, "", "duplicate key %q", JoinKey(path, k.Value))
		default:
			seen[k.Value] = true
			own = append(own, pair{k, val})
		}
	}
	for _, p := range merged {
		if !seen[p.key.Value] {
			seen[p.key.Value] = true
			own = append(own, p)
		}
	}
	return own
}

func (d *decoder) mergeSources(n *yaml.Node, path string) []pair {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if !d.step(n, path) {
		return nil
	}
	if d.merging[n] {
		d.fail(n.Line, path, "a merge (<<) refers to itself")
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		if d.merging == nil {
			d.merging = map[*yaml.Node]bool{}
		}
		d.merging[n] = true
		defer delete(d.merging, n)
		return d.pairs(n, path)
	case yaml.SequenceNode:
		var out []pair
		for _, item := range n.Content {
			out = append(out, d.mergeSources(item, path)...)
		}
		return out
	}
	d.fail(n.Line, path, "a merge (<<) needs a mapping or a list of mappings")
	return nil
}

// FieldsOf maps a struct type's yaml key names to field indexes.
func FieldsOf(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.IsExported() && name != "" && name != "-" {
			m[name] = i
		}
	}
	return m
}

// ParseBool reads a YAML switch: true, yes, on, false, no, off.
func ParseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off":
		return false, true
	}
	return false, false
}

// parseInt reads a YAML 1.2 integer: decimal (a leading 0 is still
// decimal), 0x, 0o or 0b, with optional sign and _ separators.
func parseInt(s string) (int64, bool) {
	s = strings.ReplaceAll(s, "_", "")
	body := strings.TrimLeft(s, "+-")
	base := 10
	if len(body) > 2 && body[0] == '0' && strings.ContainsRune("xXoObB", rune(body[1])) {
		base = 0
	}
	i, err := strconv.ParseInt(s, base, 64)
	return i, err == nil
}

func want(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Interface:
		return "a value"
	}
	return "an integer"
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return valueLength(n.Value)
}

// valueLength describes a value that is wrong by its length only: config
// errors never echo a value, which may be a secret in the wrong place.
func valueLength(s string) string {
	return fmt.Sprintf("a value of %d characters", utf8.RuneCountInString(s))
}

// JoinKey is the key path of name under path ("a.b").
func JoinKey(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
