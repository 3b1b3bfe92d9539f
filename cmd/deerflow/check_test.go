package main

import (
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
)

// deerflow check prints a model's base_url without the credentials in it.
func TestCheckRedactsURLCredentials(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Skills.Path = t.TempDir()
	cfg.Models = []config.Model{{Name: "main", Model: "m", BaseURL: "https://user:pass-SECRET@llm.example/v1?key=abc-SECRET&api-version=2"}}
	var out strings.Builder
	if code := check(cfg, "", &out); code != 0 {
		t.Fatalf("check: exit %d:\n%s", code, out.String())
	}
	if strings.Contains(out.String(), "SECRET") {
		t.Errorf("check printed a credential:\n%s", out.String())
	}
	if want := "https://user:***@llm.example/v1?key=***&api-version=2"; !strings.Contains(out.String(), want) {
		t.Errorf("check output lacks %s:\n%s", want, out.String())
	}
}
