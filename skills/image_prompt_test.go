package skills_test

import (
	"os"
	"strings"
	"testing"
)

// With --prompt-only, image-generation's script composes the prompt for
// the generate_image tool (which holds the image service's key outside
// the sandbox) and reaches for no service: it needs no environment.
func TestImageGenerationPromptOnly(t *testing.T) {
	b := newBox(t, false)
	b.put("testdata/image-generation/brief.json", "/mnt/user-data/workspace/fox.json")
	out := b.mustRun("python3 /mnt/skills/public/image-generation/scripts/generate_image.py " +
		"--brief /mnt/user-data/workspace/fox.json --output /mnt/user-data/outputs/fox.png --prompt-only")
	wantAll(t, "--prompt-only", out, "wrote the prompt to /mnt/user-data/outputs/fox.prompt.md", "size: 1536x1024",
		"prompt: A red fox reading a newspaper on a park bench. Style: watercolour illustration.",
		`call generate_image with this prompt, size "1536x1024" and filename "fox"`)
	if strings.Contains(out, "NO IMAGE") {
		t.Errorf("--prompt-only looked for a service:\n%s", out)
	}
	if _, err := os.Stat(b.host("/mnt/user-data/outputs/fox.prompt.md")); err != nil {
		t.Error("no prompt file")
	}
	if _, err := os.Stat(b.host("/mnt/user-data/outputs/fox.png")); err == nil {
		t.Error("an image appeared with --prompt-only")
	}
}
