package documents

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	RunChild()
	os.Exit(m.Run())
}

// Test-only formats: one that never returns, one that panics, one that
// allocates without end, and one that works.
const (
	hangFormat  Format = "hang"
	panicFormat Format = "panic"
	hogFormat   Format = "hog"
	echoFormat  Format = "echo"
)

func init() {
	extensions[".hang"], extensions[".panic"], extensions[".hog"], extensions[".echo"] = hangFormat, panicFormat, hogFormat, echoFormat
	converters[hangFormat] = func(ctx context.Context, path string, n int64, lim Limits) (*Doc, error) {
		for { // ignores ctx, as a stuck library would
			time.Sleep(time.Millisecond)
		}
	}
	converters[panicFormat] = func(ctx context.Context, path string, n int64, lim Limits) (*Doc, error) {
		var m map[string]int
		m["x"]++
		return nil, nil
	}
	converters[hogFormat] = func(ctx context.Context, path string, n int64, lim Limits) (*Doc, error) {
		var keep [][]byte
		for {
			keep = append(keep, make([]byte, 64<<20))
		}
	}
	converters[echoFormat] = func(ctx context.Context, path string, n int64, lim Limits) (*Doc, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return &Doc{Markdown: "# " + strings.TrimSpace(string(b)), Units: 1}, nil
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConvertBounds: every way a conversion can go wrong ends in an error
// worded for a person, in this process and in a child process alike; a
// parser that hangs or panics is cut off at the deadline, and in a child
// one that eats memory dies alone.
func TestConvertBounds(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{Timeout: 3 * time.Second, MaxInput: 100}
	for _, mode := range []struct {
		name string
		c    *Converter
	}{{"here", &Converter{Limits: lim}}, {"child", &Converter{Limits: lim, Exe: exe}}} {
		tests := []struct {
			file, content string
			want          error
			says          string
		}{
			{"a.echo", "Hello", nil, ""},
			{"a.hang", "x", ErrTimeout, "took too long"},
			{"a.panic", "x", ErrDamaged, "failed on it"},
			{"a.echo", "", ErrDamaged, "empty"},
			{"big.echo", strings.Repeat("x", 101), ErrTooLarge, "101 bytes; the limit is 100 bytes"},
			{"a.txt", "plain", ErrUnsupported, ""},
		}
		if mode.c.Exe != "" {
			tests = append(tests, struct {
				file, content string
				want          error
				says          string
			}{"a.hog", "x", ErrDamaged, "failed on it"})
		}
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.file+"/"+tt.says, func(t *testing.T) {
				doc, err := mode.c.Convert(context.Background(), writeFile(t, tt.file, tt.content), tt.file)
				if !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
				if err != nil {
					if !strings.Contains(err.Error(), tt.says) {
						t.Errorf("error %q does not say %q", err, tt.says)
					}
					return
				}
				if doc.Markdown != "# Hello" || doc.Format != echoFormat || doc.Units != 1 {
					t.Errorf("doc = %+v", doc)
				}
			})
		}
	}
}
