// Package boltfile reads bbolt's on-disk layout
// (go.etcd.io/bbolt/internal/common), which bbolt writes in native byte
// order, without bbolt: package store checks a file with it before bbolt
// maps the file (bbolt trusts the meta page, and on a truncated file its
// first page read past the end is a SIGBUS, not an error), and copies a
// file in use by it.
//
// It imports no package of ours.
package boltfile

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
)

// The layout's constants.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	PageHeaderSize   = 16 // id u64, flags u16, count u16, overflow u32
	metaSize         = 64 // magic, version, pageSize, flags u32; root, sequence, freelist, pgid, txid, checksum u64
	metaSumSize      = 56 // the checksum covers the fields before it
	NoFreelist       = ^uint64(0)
	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	freelistPageFlag = 0x10
)

// Meta is a meta page: the file's page size and its newest commit.
type Meta struct {
	PageSize uint32
	Root     uint64 // the root bucket's page
	Freelist uint64 // the free page list's page, or NoFreelist
	PGID     uint64 // the high-water mark: pages in use
	TxID     uint64
	Err      string // why it is invalid; "" if valid
}

// ParseMeta reads the meta page body b (after its page header).
func ParseMeta(b []byte) Meta {
	ne := binary.NativeEndian
	m := Meta{
		PageSize: ne.Uint32(b[8:]),
		Root:     ne.Uint64(b[16:]),
		Freelist: ne.Uint64(b[32:]),
		PGID:     ne.Uint64(b[40:]),
		TxID:     ne.Uint64(b[48:]),
	}
	h := fnv.New64a()
	h.Write(b[:metaSumSize])
	switch {
	case ne.Uint32(b[0:]) != boltMagic:
		m.Err = "bad magic"
	case ne.Uint32(b[4:]) != boltVersion:
		m.Err = fmt.Sprintf("bbolt format version %d", ne.Uint32(b[4:]))
	case ne.Uint64(b[56:]) != h.Sum64():
		m.Err = "meta checksum mismatch"
	}
	return m
}

// Check reports why the file f of size bytes is not a whole bbolt file
// (its meta page, root page and, if freelist is set, its free page list),
// or "" if it looks whole.
func Check(f io.ReaderAt, size int64, freelist bool) string {
	m, why := FindMeta(f, size)
	if why != "" {
		return why
	}
	pageSize := int64(m.PageSize)
	if m.PGID < 4 || m.PGID > uint64(size)/uint64(pageSize) {
		return fmt.Sprintf("truncated: %d bytes, meta says %d pages of %d", size, m.PGID, pageSize)
	}
	pageFlags := func(id uint64) uint16 {
		var b [2]byte
		if _, err := f.ReadAt(b[:], int64(id)*pageSize+8); err != nil {
			return 0
		}
		return binary.NativeEndian.Uint16(b[:])
	}
	if m.Root < 2 || m.Root >= m.PGID {
		return fmt.Sprintf("root page %d out of range", m.Root)
	}
	if fl := pageFlags(m.Root); fl != branchPageFlag && fl != leafPageFlag {
		return fmt.Sprintf("root page %d has type %#x", m.Root, fl)
	}
	if m.Freelist == NoFreelist || !freelist {
		return ""
	}
	if m.Freelist < 2 || m.Freelist >= m.PGID {
		return fmt.Sprintf("freelist page %d out of range", m.Freelist)
	}
	if fl := pageFlags(m.Freelist); fl != freelistPageFlag {
		return fmt.Sprintf("freelist page %d has type %#x", m.Freelist, fl)
	}
	return checkFreelist(f, size, int64(m.Freelist)*pageSize, m.PGID)
}

// FindMeta returns the meta page bbolt would use.
func FindMeta(f io.ReaderAt, size int64) (Meta, string) {
	readMeta := func(off int64) (Meta, bool) {
		var b [PageHeaderSize + metaSize]byte
		if _, err := f.ReadAt(b[:], off); err != nil {
			return Meta{}, false
		}
		return ParseMeta(b[PageHeaderSize:]), true
	}
	tooShort := fmt.Sprintf("file too short: %d bytes", size)
	m0, ok := readMeta(0)
	if !ok {
		return m0, tooShort
	}
	pageSize := int64(m0.PageSize)
	if m0.Err != "" {
		// Page 0 is damaged: find page 1 the way bbolt does, by trying
		// page sizes from 1 KiB.
		pageSize = 0
		for off := int64(1024); off <= 1024<<14 && off < size; off <<= 1 {
			if m, ok := readMeta(off); ok && m.Err == "" && int64(m.PageSize) == off {
				pageSize = off
				break
			}
		}
		if pageSize == 0 {
			return m0, m0.Err
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
	if m1.TxID > m0.TxID {
		m, m1 = m1, m0
	}
	if m.Err != "" {
		m = m1
	}
	if m.Err != "" {
		return m, m.Err
	}
	if int64(m.PageSize) != pageSize {
		return m, "meta pages disagree on page size"
	}
	return m, ""
}

// checkFreelist checks that the free page ids stored at off are pages of the
// file. bbolt would hand out a garbage id for new data and overwrite live
// pages.
func checkFreelist(f io.ReaderAt, size, off int64, pgid uint64) string {
	ne := binary.NativeEndian
	var h [PageHeaderSize + 8]byte
	if _, err := f.ReadAt(h[:], off); err != nil {
		return "freelist page unreadable"
	}
	start, count := off+PageHeaderSize, uint64(ne.Uint16(h[10:]))
	if count == 0xFFFF { // too many for the header: the first id is the count
		start, count = start+8, ne.Uint64(h[PageHeaderSize:])
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
