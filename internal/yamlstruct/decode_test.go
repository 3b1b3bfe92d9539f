package yamlstruct

import (
	"reflect"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Decode remembers, per key, the variables a value named that gave
// nothing, and keeps decoding past a wrong type or an unknown key.
func TestDecodeUnsetAndErrors(t *testing.T) {
	type doc struct {
		Token string   `yaml:"token"`
		Users []string `yaml:"users"`
		Turns int      `yaml:"turns"`
		Name  string   `yaml:"name"`
	}
	var root yaml.Node
	src := "token: $TOKEN\nusers: ${USERS}\nturns: many\nbogus: 1\nname: ${NAME:-x}-$SET\n"
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		t.Fatal(err)
	}
	lookup := func(name string) (string, bool) {
		if name == "SET" {
			return "y", true
		}
		return "", false
	}
	var d doc
	s := NewSource("c.yaml")
	errs := Decode(root.Content[0], reflect.ValueOf(&d).Elem(), s, lookup)
	if len(errs) != 2 {
		t.Errorf("errors: %v", errs)
	}
	if d.Name != "x-y" {
		t.Errorf("name = %q: decoding stopped at an error", d.Name)
	}
	for key, want := range map[string][]string{"token": {"TOKEN"}, "users": {"USERS"}, "name": nil} {
		if got := s.Unset[key]; !slices.Equal(got, want) {
			t.Errorf("Unset[%s] = %q, want %q", key, got, want)
		}
	}
}
