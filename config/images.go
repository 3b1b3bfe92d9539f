package config

import "github.com/deerflow/deerflow/internal/lazyre"

// ImageGeneration is the image model behind the generate_image tool: an
// OpenAI-compatible /images/generations endpoint. The key stays on the
// host (the tool runs outside the sandbox), so a skill's script never
// sees it. Without a model the tool is not offered, and the
// image-generation skill says that no image service is configured.
// Zero values mean the defaults written on each field.
type ImageGeneration struct {
	Model          string `yaml:"model"`           // e.g. gpt-image-1, dall-e-3; "" disables generate_image
	BaseURL        string `yaml:"base_url"`        // ending before /images/generations; "" = https://api.openai.com/v1
	APIKey         string `yaml:"api_key"`         // sent as a Bearer token; never logged, never in the sandbox
	Size           string `yaml:"size"`            // WIDTHxHEIGHT (1024x1024) or auto; "" = the service's default
	TimeoutSeconds int    `yaml:"timeout_seconds"` // one image, its retry included; 0 = 180
}

// imageSize is what size may be: WIDTHxHEIGHT or auto.
var imageSize = lazyre.New(`^(auto|[1-9][0-9]{1,4}x[1-9][0-9]{1,4})$`)

// ValidImageSize reports whether s is a size generate_image may send:
// WIDTHxHEIGHT in pixels (1024x1024, 1536x1024) or auto.
func ValidImageSize(s string) bool { return imageSize().MatchString(s) }

func (v *validator) imageGeneration() {
	ig := v.c.ImageGeneration
	if ig.Model == "" {
		return // off; the tool is not offered
	}
	if ig.BaseURL != "" {
		v.httpURL("image_generation.base_url", ig.BaseURL)
	}
	if ig.Size != "" && !ValidImageSize(ig.Size) {
		v.fail("image_generation.size", "must be WIDTHxHEIGHT (such as 1024x1024) or auto")
	}
	v.between("image_generation.timeout_seconds", ig.TimeoutSeconds, 0, 3600)
}
