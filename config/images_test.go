package config

import (
	"testing"
)

func TestImageGenerationValidate(t *testing.T) {
	for _, tc := range []struct {
		name, yml string
		want      []string
	}{
		{"off: nothing checked", "image_generation:\n  base_url: nope\n  size: big\n", nil},
		{"defaults", "image_generation:\n  model: gpt-image-1\n", nil},
		{"all set", "image_generation:\n  model: dall-e-3\n  base_url: http://127.0.0.1:8080/v1\n  api_key: $OPENAI_API_KEY\n  size: 1792x1024\n  timeout_seconds: 300\n", nil},
		{"auto size", "image_generation:\n  model: gpt-image-1\n  size: auto\n", nil},
		{"bad keys", "image_generation:\n  model: gpt-image-1\n  base_url: ftp://x\n  size: 1024*1024\n  timeout_seconds: -1\n", []string{
			`config.yaml:3: image_generation.base_url: must be an http(s) URL`,
			`config.yaml:4: image_generation.size: must be WIDTHxHEIGHT (such as 1024x1024) or auto`,
			`config.yaml:5: image_generation.timeout_seconds: must be between 0 and 3600, got -1`}},
		{"square only by name", "image_generation:\n  model: m\n  size: square\n", []string{
			`config.yaml:3: image_generation.size: must be WIDTHxHEIGHT (such as 1024x1024) or auto`}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkErrors(t, tc.yml, tc.want) })
	}
}

func TestImageGenerationExpands(t *testing.T) {
	c := mustParse(t, "image_generation:\n  model: gpt-image-1\n  api_key: $OPENAI_API_KEY\n  base_url: https://u:SECRET@img.example/v1\n")
	if got := c.ImageGeneration.APIKey; got != "sk-test" {
		t.Fatalf("api_key = %q, want $OPENAI_API_KEY expanded", got)
	}
	if d := Default(); d.ImageGeneration != (ImageGeneration{}) {
		t.Errorf("the default is %+v, want off (the zero value)", d.ImageGeneration)
	}
}

func TestValidImageSize(t *testing.T) {
	for s, want := range map[string]bool{"1024x1024": true, "1536x1024": true, "auto": true, "256x256": true,
		"": false, "1024": false, "0x1024": false, "1024x1024x1": false, "AUTO": false, "1024 x 1024": false, "123456x1": false} {
		if got := ValidImageSize(s); got != want {
			t.Errorf("ValidImageSize(%q) = %v, want %v", s, got, want)
		}
	}
}
