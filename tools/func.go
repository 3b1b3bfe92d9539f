package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Func builds a Tool from a typed function. The JSON schema is derived from
// In, a struct whose fields use `json` tags for names, `desc` for the
// description and `enum:"a,b"` for allowed values. A field is required unless
// its json tag has omitempty or it is a pointer.
func Func[In any](name, description string, run func(ctx context.Context, in In) (string, error)) Tool {
	var zero In
	t := reflect.TypeOf(zero)
	if t == nil || t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("tools.Func %s: In must be a struct", name))
	}
	schema, err := json.Marshal(schemaFor(t))
	if err != nil {
		panic(fmt.Sprintf("tools.Func %s: %v", name, err))
	}
	return &funcTool[In]{
		spec:     Spec{Name: name, Description: description, Parameters: schema},
		required: requiredFields(t),
		enums:    enumFields(t),
		run:      run,
	}
}

type funcTool[In any] struct {
	spec     Spec
	required []string
	enums    map[string][]string
	run      func(context.Context, In) (string, error)
}

func (f *funcTool[In]) Spec() Spec { return f.spec }

func (f *funcTool[In]) Run(ctx context.Context, args json.RawMessage) (string, error) {
	in, err := Decode[In](f.spec.Name, args, f.required, f.enums)
	if err != nil {
		return "", err
	}
	return f.run(ctx, in)
}

// Decode parses a model's arguments into In, checking required fields and
// enums. Errors are *ArgError with a message written for the model.
func Decode[In any](tool string, args json.RawMessage, required []string, enums map[string][]string) (In, error) {
	var in In
	raw := bytes.TrimSpace(args)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	// Some models double-encode: the arguments arrive as a JSON string
	// holding the object.
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = bytes.TrimSpace([]byte(s))
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return in, &ArgError{Tool: tool, Msg: "arguments must be one JSON object matching the tool's schema (" + jsonProblem(err) + ")"}
	}
	var missing []string
	for _, name := range required {
		if v, ok := obj[name]; !ok || string(v) == "null" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return in, &ArgError{Tool: tool, Msg: "missing required argument(s): " + strings.Join(missing, ", ")}
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return in, &ArgError{Tool: tool, Msg: fmt.Sprintf("argument %q must be %s, not %s", te.Field, jsonKind(te.Type), te.Value)}
		}
		return in, &ArgError{Tool: tool, Msg: jsonProblem(err)}
	}
	for field, allowed := range enums {
		v, ok := obj[field]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil && s != "" && !contains(allowed, s) {
			return in, &ArgError{Tool: tool, Msg: fmt.Sprintf("argument %q must be one of %s, not %q", field, strings.Join(allowed, ", "), s)}
		}
	}
	return in, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func jsonProblem(err error) string {
	if err == nil {
		return "got null"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, err)
	}
	return err.Error()
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// field describes one JSON field of a struct.
type field struct {
	name     string
	optional bool
	sf       reflect.StructField
}

func fields(t reflect.Type) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		optional := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") || sf.Type.Kind() == reflect.Pointer
		out = append(out, field{name: name, optional: optional, sf: sf})
	}
	return out
}

func requiredFields(t reflect.Type) []string {
	var req []string
	for _, f := range fields(t) {
		if !f.optional {
			req = append(req, f.name)
		}
	}
	return req
}

func enumFields(t reflect.Type) map[string][]string {
	m := map[string][]string{}
	for _, f := range fields(t) {
		if e := f.sf.Tag.Get("enum"); e != "" {
			m[f.name] = strings.Split(e, ",")
		}
	}
	return m
}

// schemaFor returns a JSON-schema object for t.
func schemaFor(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": schemaFor(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaFor(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		required := []string{}
		for _, f := range fields(t) {
			s := schemaFor(f.sf.Type)
			if d := f.sf.Tag.Get("desc"); d != "" {
				s["description"] = d
			}
			if e := f.sf.Tag.Get("enum"); e != "" {
				s["enum"] = strings.Split(e, ",")
			}
			props[f.name] = s
			if !f.optional {
				required = append(required, f.name)
			}
		}
		return map[string]any{"type": "object", "properties": props, "required": required}
	}
	return map[string]any{}
}
