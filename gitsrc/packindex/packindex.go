// Package packindex writes the index of a fetched pack file as
// `git index-pack` does (pack index version 2), in memory that does not
// grow with the pack: objects are hashed as they are read, and each delta
// is resolved from its base while that base's content is in hand — bases
// first, their deltas depth-first (git's find_unresolved_deltas) — so
// only one delta chain's contents are held at a time. go-git's own
// indexer keeps up to 96 MiB of delta bases in a cache, which is most of
// what a review's fetch costs in memory.
//
// The pack must be self-contained (not thin): every delta's base is in
// it. Sizes come from an untrusted server: objects are capped.
package packindex

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// MaxObject caps one object's inflated size (Index).
const MaxObject = 512 << 20

// maxObjects caps the objects of one pack.
const maxObjects = 1 << 26

// maxDepth caps a delta chain (git's default maximum is 50; 4095 is
// git's hard limit).
const maxDepth = 4096

var errThin = errors.New("a delta's base is not in the pack (thin pack)")

// entry is one object of the pack.
type entry struct {
	offset int64
	crc    uint32
	typ    plumbing.ObjectType // the object's type once resolved
	hash   plumbing.Hash       // zero until resolved
	baseOf int64               // OFS_DELTA: the base's offset
	baseID plumbing.Hash       // REF_DELTA: the base's hash
	delta  bool
	done   bool
}

// indexer holds one pack's indexing.
type indexer struct {
	s       *packfile.Scanner
	entries []entry
	byOff   map[int64]int           // offset → entry
	ofsKids map[int64][]int         // base offset → OFS_DELTA entries
	refKids map[plumbing.Hash][]int // base hash → REF_DELTA entries
	resolve int                     // entries resolved
	max     int64                   // cap on one object's size
	size    int64                   // the pack file's size
}

// Index reads the pack file at path and writes its index to idxPath; it
// returns the pack's checksum (its name: pack-CHECKSUM.pack).
func Index(path, idxPath string) (plumbing.Hash, error) {
	return index(path, idxPath, MaxObject)
}

func index(path, idxPath string, maxObject int64) (plumbing.Hash, error) {
	f, err := os.Open(path)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ix := &indexer{size: st.Size(), s: packfile.NewScanner(f), byOff: map[int64]int{}, ofsKids: map[int64][]int{},
		refKids: map[plumbing.Hash][]int{}, max: maxObject}
	if err := ix.scan(); err != nil {
		return plumbing.ZeroHash, err
	}
	sum, err := ix.s.Checksum()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("pack trailer: %w", err)
	}
	if err := ix.resolveAll(); err != nil {
		return plumbing.ZeroHash, err
	}
	return sum, ix.writeIndex(idxPath, sum)
}

// scan reads every object once: a whole object is hashed as it streams
// by, a delta noted under its base.
func (ix *indexer) scan() error {
	_, count, err := ix.s.Header()
	if err != nil {
		return fmt.Errorf("pack header: %w", err)
	}
	// Every object takes at least a header byte and a two-byte zlib stream.
	if count > maxObjects || int64(count) > ix.size/3 {
		return fmt.Errorf("pack of %d bytes says it has %d objects", ix.size, count)
	}
	ix.entries = make([]entry, count)
	for i := range ix.entries {
		oh, err := ix.s.NextObjectHeader()
		if err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		if oh.Length > ix.max {
			return fmt.Errorf("object at %d is %d bytes, over %d", oh.Offset, oh.Length, ix.max)
		}
		e := &ix.entries[i]
		e.offset, e.typ = oh.Offset, oh.Type
		ix.byOff[oh.Offset] = i
		var w io.Writer = io.Discard
		var h plumbing.Hasher
		switch oh.Type {
		case plumbing.OFSDeltaObject:
			e.delta, e.baseOf = true, oh.OffsetReference
			ix.ofsKids[e.baseOf] = append(ix.ofsKids[e.baseOf], i)
		case plumbing.REFDeltaObject:
			e.delta, e.baseID = true, oh.Reference
			ix.refKids[e.baseID] = append(ix.refKids[e.baseID], i)
		default:
			h = plumbing.NewHasher(oh.Type, oh.Length)
			w = h
		}
		_, crc, err := ix.s.NextObject(w)
		if err != nil {
			return fmt.Errorf("object at %d: %w", oh.Offset, err)
		}
		e.crc = crc
		if !e.delta {
			e.hash, e.done = h.Sum(), true
			ix.resolve++
		}
	}
	return nil
}

// resolveAll resolves every delta from the whole objects down.
func (ix *indexer) resolveAll() error {
	for i := range ix.entries {
		e := &ix.entries[i]
		if e.delta || (len(ix.ofsKids[e.offset]) == 0 && len(ix.refKids[e.hash]) == 0) {
			continue
		}
		content, err := ix.read(e.offset)
		if err != nil {
			return err
		}
		if err := ix.children(i, content, 1); err != nil {
			return err
		}
	}
	if ix.resolve != len(ix.entries) {
		return fmt.Errorf("%d of %d objects unresolved: %w", len(ix.entries)-ix.resolve, len(ix.entries), errThin)
	}
	return nil
}

// children resolves the deltas whose base is entry i, of content.
func (ix *indexer) children(i int, content []byte, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("delta chain deeper than %d", maxDepth)
	}
	base := &ix.entries[i]
	kids := append(append([]int(nil), ix.ofsKids[base.offset]...), ix.refKids[base.hash]...)
	for _, k := range kids {
		e := &ix.entries[k]
		if e.done {
			continue
		}
		delta, err := ix.read(e.offset)
		if err != nil {
			return err
		}
		if size, ok := deltaTargetSize(delta); !ok || size > uint64(ix.max) {
			return fmt.Errorf("delta at %d makes an object of %d bytes, over %d", e.offset, size, ix.max)
		}
		out, err := packfile.PatchDelta(content, delta)
		if err != nil {
			return fmt.Errorf("delta at %d: %w", e.offset, err)
		}
		e.typ = base.typ
		e.hash, e.done = plumbing.ComputeHash(e.typ, out), true
		ix.resolve++
		if err := ix.children(k, out, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// deltaTargetSize reads the size a delta's instructions say they make:
// the second of the two sizes that begin them (base, then result), each
// a little-endian base-128 number.
func deltaTargetSize(delta []byte) (uint64, bool) {
	i := 0
	var size uint64
	for n := 0; n < 2; n++ {
		size = 0
		for shift := 0; ; shift += 7 {
			if i >= len(delta) || shift > 56 {
				return 0, false
			}
			b := delta[i]
			i++
			size |= uint64(b&0x7f) << shift
			if b&0x80 == 0 {
				break
			}
		}
	}
	return size, true
}

// read inflates the object at offset (a delta's instructions, for a delta).
func (ix *indexer) read(offset int64) ([]byte, error) {
	oh, err := ix.s.SeekObjectHeader(offset)
	if err != nil {
		return nil, fmt.Errorf("object at %d: %w", offset, err)
	}
	var buf bytes.Buffer
	buf.Grow(int(min(oh.Length, 1<<20)))
	if _, _, err := ix.s.NextObject(&buf); err != nil {
		return nil, fmt.Errorf("object at %d: %w", offset, err)
	}
	return buf.Bytes(), nil
}

// writeIndex writes the version 2 index of the resolved entries.
func (ix *indexer) writeIndex(idxPath string, sum plumbing.Hash) error {
	w := &idxfile.Writer{}
	if err := w.OnHeader(uint32(len(ix.entries))); err != nil {
		return err
	}
	for _, e := range ix.entries {
		w.Add(e.hash, uint64(e.offset), e.crc)
	}
	if err := w.OnFooter(sum); err != nil {
		return err
	}
	idx, err := w.Index()
	if err != nil {
		return err
	}
	f, err := os.Create(idxPath)
	if err != nil {
		return err
	}
	if _, err := idxfile.NewEncoder(f).Encode(idx); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
