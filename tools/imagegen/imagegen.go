// Package imagegen is the generate_image tool: it asks an OpenAI-compatible
// images endpoint (POST <base_url>/images/generations, through go-openai)
// for one picture and saves it in the conversation's outputs, where
// present_files can deliver it.
//
// It runs on the host, not in the sandbox, because it holds the image
// service's API key: sandboxed commands see no secrets (a person in the
// chat can read whatever the sandbox sees), so a skill's script could
// never reach the service itself. The key goes only into the request's
// Authorization header; it is scrubbed from error text and never written
// to a file or a tool result.
//
// Images come back as b64_json. A service that answers with a url instead
// is followed only to a public http(s) address (the check web_fetch makes,
// applied after DNS), so a hostile or confused endpoint cannot make the
// host fetch from its own network.
//
// It imports config, event, internal/redact, llm, tools and web (the
// address check); not sandbox: Outputs is the one method it needs of
// *sandbox.Manager.
package imagegen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif"  // DecodeConfig tells the formats registered
	_ "image/jpeg" // (gpt-image models may be asked for JPEG)
	_ "image/png"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/redact"
	"github.com/deerflow/deerflow/tools"
)

// Name is the tool's name.
const Name = "generate_image"

// MaxBytes is the largest image saved: 20 MB, well above what the
// services return (a 1536x1024 PNG is 2-4 MB).
const MaxBytes = 20 << 20

const (
	defaultBaseURL = "https://api.openai.com/v1"
	defaultTimeout = 3 * time.Minute // gpt-image-1 takes up to a minute or two
)

// Outputs saves a file in a conversation's /mnt/user-data/outputs through
// the sandbox's jailed file access. *sandbox.Manager implements it.
type Outputs interface {
	SaveOutput(threadID, name string, data []byte) (event.File, error)
}

// Options configures the tool. Zero values mean the defaults written on
// each field.
type Options struct {
	Model   string // the service's model id, e.g. gpt-image-1, dall-e-3; required
	BaseURL string // ending before /images/generations; "" = https://api.openai.com/v1
	APIKey  string // sent as a Bearer token; "" sends none (fine for a local server)
	Size    string // WIDTHxHEIGHT or auto, when a call names none; "" = the service's default
	// Timeout bounds one call, its retry included; 0 = three minutes.
	Timeout time.Duration
	// HTTPClient talks to the endpoint; nil = a pooled client of ours.
	// Its Timeout should be 0 (Timeout above bounds calls).
	HTTPClient *http.Client
	// Outputs is where images are saved; required.
	Outputs Outputs
}

// FromConfig returns generate_image as cfg's image_generation key
// configures it, saving into out; nil when no model is configured (the
// tool is then not offered).
func FromConfig(cfg *config.Config, out Outputs) tools.Tool {
	ig := cfg.ImageGeneration
	if ig.Model == "" || out == nil {
		return nil
	}
	return New(Options{Model: ig.Model, BaseURL: ig.BaseURL, APIKey: ig.APIKey, Size: ig.Size,
		Timeout: time.Duration(ig.TimeoutSeconds) * time.Second, Outputs: out})
}

// Describe is the line `deerflow check` prints for cfg's image_generation
// key: the model and endpoint (credentials in the URL masked), and
// whether a key is set; never the key.
func Describe(cfg *config.Config) string {
	ig := cfg.ImageGeneration
	if ig.Model == "" {
		return "images\toff: generate_image is not offered, and image-generation delivers prompts only (image_generation.model)"
	}
	base, key := ig.BaseURL, "with an API key"
	if base == "" {
		base = defaultBaseURL
	}
	if ig.APIKey == "" {
		key = "NO API key"
	}
	return fmt.Sprintf("images\tgenerate_image by %s at %s, %s", ig.Model, redact.URLs(base), key)
}

// New returns the generate_image tool. It does not contact the service.
func New(o Options) tools.Tool {
	g := newGenerator(o)
	return &tool{Tool: tools.Func(Name, description, g.run), g: g}
}

// tool is generate_image; it keeps its own time (Options.Timeout), so the
// agent's per-call limit does not cut a slow image short.
type tool struct {
	tools.Tool
	g *generator
}

// SelfTimed implements tools.SelfTimed.
func (t *tool) SelfTimed() bool { return true }

const description = "Generate one image from a text prompt with the configured image service and save it in " +
	"/mnt/user-data/outputs. Returns the file's path: deliver it with present_files. Write a precise, " +
	"self-contained prompt (subject, setting, style, composition, lighting, palette, text to show, what to avoid); " +
	"for the image-generation skill, pass the prompt its script composed. A refusal (content policy, an invalid " +
	"size) comes back as an error to act on; do not retry the same prompt more than once."

type args struct {
	Prompt      string `json:"prompt" desc:"The full image prompt, in one paragraph."`
	Size        string `json:"size,omitempty" desc:"WIDTHxHEIGHT in pixels, e.g. 1024x1024 (square), 1536x1024 (landscape), 1024x1536 (portrait), or auto. Omit for the configured default."`
	Filename    string `json:"filename,omitempty" desc:"Base name for the file in /mnt/user-data/outputs, e.g. fox-watercolour; .png is added. Use a new name for each variation so earlier images stay."`
	Description string `json:"description,omitempty" desc:"One line saying what the image shows, for the person; returned with the path to use as the caption."`
}

func (g *generator) run(ctx context.Context, in args) (string, error) {
	prompt := strings.TrimSpace(in.Prompt)
	if prompt == "" {
		return "", &tools.ArgError{Tool: Name, Msg: "prompt must not be empty: describe the image to generate"}
	}
	size := strings.TrimSpace(in.Size)
	if size == "" {
		size = g.size
	}
	if size != "" && !config.ValidImageSize(size) {
		return "", &tools.ArgError{Tool: Name, Msg: fmt.Sprintf("size %q must be WIDTHxHEIGHT in pixels (such as 1024x1024) or auto", size)}
	}
	thread := tools.EnvFrom(ctx).ThreadID
	if thread == "" {
		return "", fmt.Errorf("%s needs a conversation to save the image in, and this call has none", Name)
	}
	data, revised, err := g.generate(ctx, prompt, size)
	if err != nil {
		return "", g.explain(ctx, err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return "", g.explain(ctx, fmt.Errorf("%w: %v", errNotImage, err))
	}
	f, err := g.out.SaveOutput(thread, fileName(in.Filename, prompt, format), data)
	if err != nil {
		return "", &sentence{msg: "The image was generated but could not be saved in /mnt/user-data/outputs.", err: err}
	}
	return result(f, cfg, format, revised, in.Description), nil
}

// result is what the model reads after a saved image.
func result(f event.File, cfg image.Config, format, revised, caption string) string {
	paths, _ := json.Marshal([]string{f.Path})
	var b strings.Builder
	fmt.Fprintf(&b, "Saved the image to %s (%dx%d %s, %d KB). Deliver it with present_files %s.",
		f.Path, cfg.Width, cfg.Height, strings.ToUpper(format), (f.Size+1023)/1024, paths)
	if revised = strings.TrimSpace(revised); revised != "" {
		b.WriteString("\nThe service rewrote the prompt as: " + tools.Clip(revised, 2000))
	}
	if caption = strings.TrimSpace(caption); caption != "" {
		b.WriteString("\nCaption: " + tools.Clip(caption, 500))
	}
	return b.String()
}

// fileName is the output's base name: the name asked for, else the
// prompt's first words, reduced to letters, digits, '-' and '_', with
// the extension of the format the service sent.
func fileName(asked, prompt, format string) string {
	base := path.Base(strings.ReplaceAll(strings.TrimSpace(asked), "\\", "/"))
	switch strings.ToLower(path.Ext(base)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		base = strings.TrimSuffix(base, path.Ext(base))
	}
	slug := slugify(base, 80)
	if slug == "" {
		slug = slugify(strings.Join(firstWords(prompt, 6), "-"), 48)
	}
	if slug == "" {
		slug = "image"
	}
	ext := "." + format
	if format == "jpeg" {
		ext = ".jpg"
	}
	return slug + ext
}

func firstWords(s string, n int) []string {
	w := strings.Fields(s)
	return w[:min(n, len(w))]
}

// slugify keeps letters (any script), digits and '_', turns runs of
// anything else into one '-', and stops before n bytes.
func slugify(s string, n int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if b.Len()+utf8.RuneLen(r) > n {
			break
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}
