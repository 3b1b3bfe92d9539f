package doc

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// MaxZipEntries is the most entries a zipped Office file may hold; real
// documents have tens, a bomb made of many tiny entries has millions.
const MaxZipEntries = 10_000

// CFBMagic starts an OLE2 compound file. An .docx/.xlsx/.pptx that starts
// with it is an Office file saved with a password: the zip is encrypted
// inside an "EncryptedPackage" stream.
var CFBMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// ZipFile is an opened zipped Office file whose declared unpacked size was
// checked against the limit; entries are found by name.
type ZipFile struct {
	r      *zip.ReadCloser
	byName map[string]*zip.File
	limit  int64 // the most bytes one entry may inflate to
}

// OpenZip opens the zipped Office file at path after refusing what would
// unpack to more than lim.MaxUnpacked or holds too many entries, before
// anything is inflated. An OLE2 file is a password-protected package
// (ErrEncrypted); anything else that is not a zip is ErrDamaged.
func OpenZip(path string, lim Limits) (*ZipFile, error) {
	if err := sniffPackage(path); err != nil {
		return nil, err
	}
	r, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("%w (not a valid zip package)", ErrDamaged)
	}
	if len(r.File) > MaxZipEntries {
		r.Close()
		return nil, fmt.Errorf("%w (it holds more than %d parts)", ErrTooLarge, MaxZipEntries)
	}
	z := &ZipFile{r: r, byName: make(map[string]*zip.File, len(r.File)), limit: lim.MaxUnpacked}
	var total uint64
	for _, f := range r.File {
		total += f.UncompressedSize64
		if total > uint64(lim.MaxUnpacked) {
			r.Close()
			return nil, fmt.Errorf("%w (it would unpack to more than %d MB)", ErrTooLarge, lim.MaxUnpacked>>20)
		}
		name := strings.TrimPrefix(f.Name, "/")
		if _, dup := z.byName[name]; !dup {
			z.byName[name] = f
		}
	}
	return z, nil
}

// sniffPackage reads the first bytes of the file: the OLE2 signature means
// an encrypted Office package, an empty file is damaged.
func sniffPackage(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(CFBMagic))
	n, _ := io.ReadFull(f, head)
	switch {
	case n == 0:
		return fmt.Errorf("%w (the file is empty)", ErrDamaged)
	case bytes.Equal(head[:n], CFBMagic):
		return fmt.Errorf("%w (the Office file is encrypted)", ErrEncrypted)
	}
	return nil
}

// Close releases the file.
func (z *ZipFile) Close() error { return z.r.Close() }

// Limit is the most bytes one entry may inflate to.
func (z *ZipFile) Limit() int64 { return z.limit }

// Has reports whether the package holds the named part.
func (z *ZipFile) Has(name string) bool { return z.byName[name] != nil }

// Open returns a reader of the named part capped at the unpacked limit,
// since a declared size can lie; the caller closes it.
func (z *ZipFile) Open(name string) (io.ReadCloser, error) {
	f := z.byName[name]
	if f == nil {
		return nil, fmt.Errorf("%w (no %s)", ErrDamaged, name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w (cannot open %s)", ErrDamaged, name)
	}
	return &cappedReader{Reader: io.LimitReader(rc, z.limit+1), c: rc, name: name, limit: z.limit}, nil
}

// ReadEntry reads the whole named part, at most the unpacked limit.
func (z *ZipFile) ReadEntry(name string) ([]byte, error) {
	rc, err := z.Open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// cappedReader reads one zip entry and fails once more than limit bytes
// come out, and turns the zip reader's own errors (checksum, a size that
// differs from the declared one) into ErrDamaged.
type cappedReader struct {
	io.Reader
	c     io.Closer
	name  string
	limit int64
	n     int64
}

// Read reads from the entry, counting the bytes.
func (r *cappedReader) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	r.n += int64(n)
	if r.n > r.limit {
		return n, fmt.Errorf("%w (%s would unpack to more than %d MB)", ErrTooLarge, r.name, r.limit>>20)
	}
	if err != nil && err != io.EOF {
		if errors.Is(err, ErrTooLarge) {
			return n, err
		}
		return n, fmt.Errorf("%w (%s: %v)", ErrDamaged, r.name, err)
	}
	return n, err
}

// Close closes the entry.
func (r *cappedReader) Close() error { return r.c.Close() }

// Rel is one relationship of a package part: where it points and what
// kind of part that is (its Type URI, e.g. ".../relationships/slide").
type Rel struct{ Target, Type string }

// Rels reads a relationships part and returns its targets by Id, resolved
// against the directory of the part they belong to (base), e.g.
// Rels("ppt/_rels/presentation.xml.rels", "ppt") maps rId2 to
// "ppt/slides/slide1.xml"; external targets (links) are kept as they are.
// A missing part gives an empty map.
func (z *ZipFile) Rels(name, base string) (map[string]Rel, error) {
	out := map[string]Rel{}
	if !z.Has(name) {
		return out, nil
	}
	data, err := z.ReadEntry(name)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Rel []struct {
			ID         string `xml:"Id,attr"`
			Target     string `xml:"Target,attr"`
			TargetMode string `xml:"TargetMode,attr"`
			Type       string `xml:"Type,attr"`
		} `xml:"Relationship"`
	}
	if err := XMLUnmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w (%s: %v)", ErrDamaged, name, err)
	}
	for _, r := range doc.Rel {
		t := r.Target
		if r.TargetMode != "External" {
			if strings.HasPrefix(t, "/") {
				t = strings.TrimPrefix(t, "/")
			} else {
				t = path.Join(base, t)
			}
		}
		out[r.ID] = Rel{Target: t, Type: r.Type}
	}
	return out, nil
}

// RelsOf returns the relationships of the part named part, which live in
// "<dir>/_rels/<file>.rels" and are relative to dir.
func (z *ZipFile) RelsOf(part string) (map[string]Rel, error) {
	dir, file := path.Split(part)
	return z.Rels(dir+"_rels/"+file+".rels", strings.TrimSuffix(dir, "/"))
}

// MainPart returns the package's main document part from _rels/.rels
// (the officeDocument relationship), or def when it names none.
func (z *ZipFile) MainPart(def string) string {
	rs, err := z.Rels("_rels/.rels", "")
	if err != nil {
		return def
	}
	for _, r := range rs {
		if strings.HasSuffix(r.Type, "/officeDocument") && z.Has(r.Target) {
			return r.Target
		}
	}
	return def
}

// XMLUnmarshal decodes a whole XML part into v.
func XMLUnmarshal(data []byte, v any) error { return xml.Unmarshal(data, v) }

// TimedOut returns ErrTimeout (wrapped) once ctx is done, nil before.
func TimedOut(ctx context.Context) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (stopped after the time limit)", ErrTimeout)
	}
	return nil
}

// Xattr returns the value of the attribute with the local name local, or "".
func Xattr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}
