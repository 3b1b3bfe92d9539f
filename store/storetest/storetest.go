// Package storetest damages deerflow database files for tests: it finds a
// page by walking bbolt's on-disk layout and overwrites it, the way a bad
// sector or a copy taken mid-write would. It reads and writes bytes only
// and imports no deerflow package, so store's own tests can use it.
package storetest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
)

// bbolt's layout (go.etcd.io/bbolt/internal/common), native byte order.
const (
	pageHeader  = 16 // id u64, flags u16, count u16, overflow u32
	branchFlag  = 0x01
	leafFlag    = 0x02
	bucketFlag  = 0x01 // a leaf element holding a sub-bucket
	leafElem    = 16   // flags, pos, ksize, vsize u32
	branchElem  = 16   // pos, ksize u32, pgid u64
	metaTxidOff = pageHeader + 48
)

var ne = binary.NativeEndian

type file struct {
	b        []byte
	pageSize int
}

func (f *file) page(id uint64) []byte {
	off := int(id) * f.pageSize
	if off < 0 || off+pageHeader > len(f.b) {
		return nil
	}
	return f.b[off:]
}

// leafKeys returns a leaf page's keys, and bucket values by key.
func leafKeys(p []byte) (keys [][]byte, buckets map[string][]byte) {
	buckets = map[string][]byte{}
	n := int(ne.Uint16(p[10:]))
	for i := range n {
		e := pageHeader + i*leafElem
		flags, pos := ne.Uint32(p[e:]), int(ne.Uint32(p[e+4:]))
		ks, vs := int(ne.Uint32(p[e+8:])), int(ne.Uint32(p[e+12:]))
		k := p[e+pos : e+pos+ks]
		keys = append(keys, k)
		if flags&bucketFlag != 0 {
			buckets[string(k)] = p[e+pos+ks : e+pos+ks+vs]
		}
	}
	return keys, buckets
}

// leaves returns the ids of the leaf pages under page id, in key order.
func (f *file) leaves(id uint64) []uint64 {
	p := f.page(id)
	if p == nil {
		return nil
	}
	if ne.Uint16(p[8:])&branchFlag == 0 {
		return []uint64{id}
	}
	var out []uint64
	for i := range int(ne.Uint16(p[10:])) {
		e := pageHeader + i*branchElem
		out = append(out, f.leaves(ne.Uint64(p[e+8:]))...)
	}
	return out
}

// DamageThread overwrites, in the closed database at path, one leaf page
// of the messages bucket that holds only thread's messages (the middle one,
// if there are several). The thread needs messages enough to fill a page
// of their own (a few pages' worth).
func DamageThread(path, thread string) error {
	_, err := DamageBucket(path, "messages", thread+"\x00")
	return err
}

// DamageBucket overwrites, in the closed database at path, one leaf page
// of the top-level bucket whose keys all begin with prefix (the middle one,
// if there are several), and returns the keys it held.
func DamageBucket(path, bucket, prefix string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := &file{b: b, pageSize: int(ne.Uint32(b[pageHeader+8:]))}
	root, err := f.bucketRoot(bucket)
	if err != nil {
		return nil, err
	}
	var own []uint64
	var keys [][]string
	for _, leaf := range f.leaves(root) {
		ks, _ := leafKeys(f.page(leaf))
		var names []string
		for _, k := range ks {
			if bytes.HasPrefix(k, []byte(prefix)) {
				names = append(names, string(k))
			}
		}
		if len(ks) > 0 && len(names) == len(ks) {
			own, keys = append(own, leaf), append(keys, names)
		}
	}
	if len(own) == 0 {
		return nil, fmt.Errorf("storetest: no leaf page of bucket %s holds only keys starting %q", bucket, prefix)
	}
	i := len(own) / 2
	p := f.page(own[i])
	for j := 8; j < f.pageSize; j++ {
		p[j] = 0xAB // flags, count and elements: garbage
	}
	return keys[i], os.WriteFile(path, b, 0o600)
}

// bucketRoot returns the root page of a top-level bucket.
func (f *file) bucketRoot(name string) (uint64, error) {
	meta := f.page(0)
	if m1 := f.page(1); ne.Uint64(m1[metaTxidOff:]) > ne.Uint64(meta[metaTxidOff:]) {
		meta = m1
	}
	for _, leaf := range f.leaves(ne.Uint64(meta[pageHeader+16:])) {
		if _, bk := leafKeys(f.page(leaf)); bk[name] != nil {
			if root := ne.Uint64(bk[name]); root != 0 {
				return root, nil
			}
			return 0, fmt.Errorf("storetest: bucket %s is inline: too few keys", name)
		}
	}
	return 0, fmt.Errorf("storetest: no bucket %s", name)
}
