package config

// Uploads configures what is done with the files people send.
type Uploads struct {
	Convert Convert `yaml:"convert"`
}

// Convert bounds the conversion of PDF, Word, Excel, PowerPoint, CSV and
// HTML uploads to Markdown. A file over a limit is kept as it came, and
// the model and the person are told why it was not converted.
type Convert struct {
	Enabled        bool `yaml:"enabled"`         // default true (only when the key is absent)
	TimeoutSeconds int  `yaml:"timeout_seconds"` // one file's conversion; default 60
	MaxMB          int  `yaml:"max_mb"`          // larger files are not converted; default 50
	MaxUnpackedMB  int  `yaml:"max_unpacked_mb"` // a zipped Office file unpacking to more is refused (zip bombs); default 200
	MaxMarkdownKB  int  `yaml:"max_markdown_kb"` // Markdown kept per file; the rest is cut, with a note; default 4096
}

// Transcription is the speech-to-text model that turns voice notes and
// audio into the message's text: an OpenAI-compatible
// /audio/transcriptions endpoint. Without a model, voice is refused with
// a note saying so.
type Transcription struct {
	Model          string `yaml:"model"`           // e.g. whisper-1; "" disables transcription
	BaseURL        string `yaml:"base_url"`        // ending before /audio/transcriptions; default https://api.openai.com/v1
	APIKey         string `yaml:"api_key"`         // sent as a Bearer token; never logged; default $OPENAI_API_KEY
	Language       string `yaml:"language"`        // ISO-639-1 hint (e.g. en, de); "" lets the model detect it
	TimeoutSeconds int    `yaml:"timeout_seconds"` // one transcription; default 120
	MaxMB          int    `yaml:"max_mb"`          // longer recordings are refused; default 25 (OpenAI's limit)
}

func (c *Config) uploadsDefaults(env func(string) string) {
	cv := &c.Uploads.Convert
	if !c.given("uploads.convert.enabled") {
		cv.Enabled = true
	}
	defInt(&cv.TimeoutSeconds, 60)
	defInt(&cv.MaxMB, 50)
	defInt(&cv.MaxUnpackedMB, 200)
	defInt(&cv.MaxMarkdownKB, 4096)
	tr := &c.Transcription
	defString(&tr.BaseURL, defaultBaseURL)
	defString(&tr.APIKey, env("$OPENAI_API_KEY"))
	defInt(&tr.TimeoutSeconds, 120)
	defInt(&tr.MaxMB, 25)
}

func (v *validator) uploads() {
	cv := v.c.Uploads.Convert
	v.between("uploads.convert.timeout_seconds", cv.TimeoutSeconds, 1, 3600)
	v.between("uploads.convert.max_mb", cv.MaxMB, 1, 2048)
	v.between("uploads.convert.max_unpacked_mb", cv.MaxUnpackedMB, 1, 16384)
	v.between("uploads.convert.max_markdown_kb", cv.MaxMarkdownKB, 1, 65536)
	tr := v.c.Transcription
	if tr.Model == "" {
		return // off; deerflow check says so
	}
	v.httpURL("transcription.base_url", tr.BaseURL)
	v.between("transcription.timeout_seconds", tr.TimeoutSeconds, 1, 3600)
	v.between("transcription.max_mb", tr.MaxMB, 1, 1024)
}
