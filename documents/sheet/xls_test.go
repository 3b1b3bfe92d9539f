package sheet

import (
	"bytes"
	"os"
	"testing"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/google/go-cmp/cmp"
)

func TestXLSFromLibreOffice(t *testing.T) {
	got, err := convertFile(t, doc.XLS, "testdata/book.xls", doc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(bookMarkdown, got.Markdown); diff != "" {
		t.Errorf("Markdown (-want +got):\n%s", diff)
	}
	if got.Units != 2 || got.Format != doc.XLS {
		t.Errorf("got = %+v, want XLS with 2 sheets", got)
	}
}

func TestXLSEncryptedFilePass(t *testing.T) {
	data, err := os.ReadFile("testdata/book.xls")
	if err != nil {
		t.Fatal(err)
	}
	// Turn the globals' CODEPAGE record (0x0042, 2 bytes, 1200) into a
	// FILEPASS record, which is what an encrypted workbook has there.
	codepage := []byte{0x42, 0x00, 0x02, 0x00, 0xB0, 0x04}
	i := bytes.Index(data, codepage)
	if i < 0 {
		t.Fatal("no CODEPAGE record in book.xls")
	}
	data[i] = 0x2F
	_, err = convertFile(t, doc.XLS, writeTemp(t, "locked.xls", data), doc.Limits{})
	wantErr(t, "FILEPASS", err, doc.ErrEncrypted)
}

func TestXLSDamagedRecords(t *testing.T) {
	data, err := os.ReadFile("testdata/book.xls")
	if err != nil {
		t.Fatal(err)
	}
	// Scribble over the middle of the workbook stream: whatever comes out,
	// it must be an error or a document, never a panic or a hang.
	for off := 0x200; off < len(data)-64; off += 97 {
		bad := append([]byte(nil), data...)
		for k := range 48 {
			bad[off+k] ^= byte(0xA5 + k)
		}
		got, err := convertFile(t, doc.XLS, writeTemp(t, "bad.xls", bad), doc.Limits{})
		if err == nil && got == nil {
			t.Fatalf("offset %d: no document and no error", off)
		}
	}
}

func TestSSTContinue(t *testing.T) {
	// One 8-bit string "abcdef" split across a CONTINUE whose characters
	// are 16-bit: the continuation starts with its own flags byte.
	sst := []byte{1, 0, 0, 0, 1, 0, 0, 0, 6, 0, 0, 'a', 'b', 'c'}
	cont := []byte{1, 'd', 0, 'e', 0, 0x4D, 0x04}
	got := parseSST([][]byte{sst, cont})
	if diff := cmp.Diff([]string{"abcdeэ"}, got); diff != "" {
		t.Errorf("SST (-want +got):\n%s", diff)
	}
}

func TestRKNumber(t *testing.T) {
	for rk, want := range map[uint32]float64{
		0x3FF00000:           1,      // float 1.0
		0x3FF00001:           0.01,   // float 1.0 / 100
		0xFFFFFFF6:           -3,     // integer -3
		uint32(12345<<2 | 3): 123.45, // integer / 100
	} {
		if got := rkNumber(rk); got != want {
			t.Errorf("rkNumber(%#x) = %v, want %v", rk, got, want)
		}
	}
}
