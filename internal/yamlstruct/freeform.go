package yamlstruct

import (
	"fmt"
	"math"
	"strconv"

	"github.com/deerflow/deerflow/internal/envvar"

	"go.yaml.in/yaml/v3"
)

// anyValue decodes a free-form value (extra_body) into what encoding/json
// makes of JSON: map[string]any, []any, string, bool, int64 or float64.
// A plain scalar is typed by the YAML 1.2 core schema after expansion,
// so `budget_tokens: $BUDGET` is a number; a quoted one stays a string.
func (d *decoder) anyValue(n *yaml.Node, path string) any {
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for _, p := range d.pairs(n, path) {
			k := JoinKey(path, p.key.Value)
			d.src.Lines[k] = p.key.Line
			if val := d.nested(p.val, k); val != nil {
				m[p.key.Value] = val
			}
		}
		return m
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			list = append(list, d.nested(item, fmt.Sprintf("%s[%d]", path, i)))
		}
		return list
	}
	s, err := envvar.Expand(n.Value, d.lookup)
	if err != nil {
		d.fail(n.Line, path, "%v", err)
		return nil
	}
	if n.Style != 0 && n.Tag == "!!str" { // quoted, a block or !!str
		return s
	}
	return coreScalar(s)
}

// nested decodes one value inside a free-form one, resolving aliases and
// counting the work like value does.
func (d *decoder) nested(n *yaml.Node, path string) any {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" || !d.step(n, path) {
		return nil
	}
	return d.anyValue(n, path)
}

// coreScalar types a plain scalar by the YAML 1.2 core schema.
func coreScalar(s string) any {
	switch s {
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	case "", "~", "null", "Null", "NULL":
		return nil
	}
	if i, ok := parseInt(s); ok {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f // NaN and Inf have no JSON
	}
	return s
}
