package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
)

// bbolt's on-disk layout (go.etcd.io/bbolt/internal/common), which bbolt
// writes in native byte order. checkFile reads it before bbolt maps the file:
// bbolt trusts the meta page, and on a truncated file its first page read
// past the end is a SIGBUS, not an error.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16 // id u64, flags u16, count u16, overflow u32
	metaSize         = 64 // magic, version, pageSize, flags u32; root, sequence, freelist, pgid, txid, checksum u64
	metaSumSize      = 56 // the checksum covers the fields before it
	noFreelist       = ^uint64(0)
	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	freelistPageFlag = 0x10
)

type boltMeta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64
	txid     uint64
	err      string // why it is invalid; "" if valid
}

func parseMeta(b []byte) boltMeta {
	ne := binary.NativeEndian
	m := boltMeta{
		pageSize: ne.Uint32(b[8:]),
		root:     ne.Uint64(b[16:]),
		freelist: ne.Uint64(b[32:]),
		pgid:     ne.Uint64(b[40:]),
		txid:     ne.Uint64(b[48:]),
	}
	h := fnv.New64a()
	h.Write(b[:metaSumSize])
	switch {
	case ne.Uint32(b[0:]) != boltMagic:
		m.err = "bad magic"
	case ne.Uint32(b[4:]) != boltVersion:
		m.err = fmt.Sprintf("bbolt format version %d", ne.Uint32(b[4:]))
	case ne.Uint64(b[56:]) != h.Sum64():
		m.err = "meta checksum mismatch"
	}
	return m
}

// checkFile reports whether path, if it exists and is not empty, looks like
// a whole bbolt file: a valid meta page whose pages all lie inside the file.
// It only reads.
func checkFile(path string) error { return checkFileLayout(path, true) }

// checkFileLayout is checkFile, checking the freelist only if freelist is
// set: a read-only bbolt never reads it.
func checkFileLayout(path string, freelist bool) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if fi.Size() == 0 {
		return nil // bbolt initializes an empty file
	}
	if why := checkLayout(f, fi.Size(), freelist); why != "" {
		return corrupt(path, why)
	}
	return nil
}

func checkLayout(f io.ReaderAt, size int64, freelist bool) string {
	m, why := findMeta(f, size)
	if why != "" {
		return why
	}
	pageSize := int64(m.pageSize)
	if m.pgid < 4 || m.pgid > uint64(size)/uint64(pageSize) {
		return fmt.Sprintf("truncated: %d bytes, meta says %d pages of %d", size, m.pgid, pageSize)
	}
	pageFlags := func(id uint64) uint16 {
		var b [2]byte
		if _, err := f.ReadAt(b[:], int64(id)*pageSize+8); err != nil {
			return 0
		}
		return binary.NativeEndian.Uint16(b[:])
	}
	if m.root < 2 || m.root >= m.pgid {
		return fmt.Sprintf("root page %d out of range", m.root)
	}
	if fl := pageFlags(m.root); fl != branchPageFlag && fl != leafPageFlag {
		return fmt.Sprintf("root page %d has type %#x", m.root, fl)
	}
	if m.freelist == noFreelist || !freelist {
		return ""
	}
	if m.freelist < 2 || m.freelist >= m.pgid {
		return fmt.Sprintf("freelist page %d out of range", m.freelist)
	}
	if fl := pageFlags(m.freelist); fl != freelistPageFlag {
		return fmt.Sprintf("freelist page %d has type %#x", m.freelist, fl)
	}
	return checkFreelist(f, size, int64(m.freelist)*pageSize, m.pgid)
}

// findMeta returns the meta page bbolt would use.
func findMeta(f io.ReaderAt, size int64) (boltMeta, string) {
	readMeta := func(off int64) (boltMeta, bool) {
		var b [pageHeaderSize + metaSize]byte
		if _, err := f.ReadAt(b[:], off); err != nil {
			return boltMeta{}, false
		}
		return parseMeta(b[pageHeaderSize:]), true
	}
	tooShort := fmt.Sprintf("file too short: %d bytes", size)
	m0, ok := readMeta(0)
	if !ok {
		return m0, tooShort
	}
	pageSize := int64(m0.pageSize)
	if m0.err != "" {
		// Page 0 is damaged: find page 1 the way bbolt does, by trying
		// page sizes from 1 KiB.
		pageSize = 0
		for off := int64(1024); off <= 1024<<14 && off < size; off <<= 1 {
			if m, ok := readMeta(off); ok && m.err == "" && int64(m.pageSize) == off {
				pageSize = off
				break
			}
		}
		if pageSize == 0 {
			return m0, m0.err
		}
	}
	if pageSize < 512 || pageSize > 1<<24 || pageSize&(pageSize-1) != 0 {
		return m0, fmt.Sprintf("bad page size %d", pageSize)
	}
	m1, ok := readMeta(pageSize)
	if !ok {
		return m1, tooShort
	}
	// Like bbolt: the valid meta with the highest transaction id wins.
	m := m0
	if m1.txid > m0.txid {
		m, m1 = m1, m0
	}
	if m.err != "" {
		m = m1
	}
	if m.err != "" {
		return m, m.err
	}
	if int64(m.pageSize) != pageSize {
		return m, "meta pages disagree on page size"
	}
	return m, ""
}

// checkFreelist checks that the free page ids stored at off are pages of the
// file. bbolt would hand out a garbage id for new data and overwrite live
// pages.
func checkFreelist(f io.ReaderAt, size, off int64, pgid uint64) string {
	ne := binary.NativeEndian
	var h [pageHeaderSize + 8]byte
	if _, err := f.ReadAt(h[:], off); err != nil {
		return "freelist page unreadable"
	}
	start, count := off+pageHeaderSize, uint64(ne.Uint16(h[10:]))
	if count == 0xFFFF { // too many for the header: the first id is the count
		start, count = start+8, ne.Uint64(h[pageHeaderSize:])
	}
	if count > uint64(size-start)/8 {
		return fmt.Sprintf("freelist of %d pages runs past the end", count)
	}
	ids := make([]byte, count*8)
	if _, err := f.ReadAt(ids, start); err != nil {
		return "freelist unreadable"
	}
	for i := 0; i < len(ids); i += 8 {
		if id := ne.Uint64(ids[i:]); id < 2 || id >= pgid {
			return fmt.Sprintf("free page %d out of range", id)
		}
	}
	return ""
}
