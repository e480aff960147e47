package frame

import (
	"encoding/binary"
	"sort"
)

// IndexStore keeps a table's FDE index across processes (faultline's
// persistent index cache): Load is asked once, before the index would be
// built by walking every entry, and Store is given an index built without
// error. A loaded index is checked against the table before it is used.
type IndexStore interface {
	Load() []byte
	Store(index []byte)
}

// indexEntrySize is begin, end and offset, each a little-endian u64.
const indexEntrySize = 24

// loadOrBuildIndex adopts the stored index when there is one that fits,
// else builds it and offers it to the store.
func (t *Table) loadOrBuildIndex() {
	if t.Index != nil {
		if b := t.Index.Load(); b != nil && t.setIndex(b) {
			return
		}
	}
	t.buildIndex()
	if t.Index != nil && t.indexErr == nil {
		t.Index.Store(encodeIndex(t.index))
	}
}

func encodeIndex(index []indexEntry) []byte {
	out := make([]byte, len(index)*indexEntrySize)
	le := binary.LittleEndian
	for i, e := range index {
		b := out[i*indexEntrySize:]
		le.PutUint64(b[0:], e.begin)
		le.PutUint64(b[8:], e.end)
		le.PutUint64(b[16:], e.off)
	}
	return out
}

// setIndex takes b as the table's index when it fits: whole entries, each
// a non-empty range at an offset inside the section, sorted by start. The
// entries themselves are parsed, and checked against pc, when used.
func (t *Table) setIndex(b []byte) bool {
	if len(b)%indexEntrySize != 0 || len(b)/indexEntrySize > len(t.data)/8+1 {
		return false
	}
	index := make([]indexEntry, len(b)/indexEntrySize)
	le := binary.LittleEndian
	for i := range index {
		e := b[i*indexEntrySize:]
		index[i] = indexEntry{begin: le.Uint64(e[0:]), end: le.Uint64(e[8:]), off: le.Uint64(e[16:])}
		if index[i].begin >= index[i].end || index[i].off >= uint64(len(t.data)) {
			return false
		}
	}
	if !sort.SliceIsSorted(index, func(i, j int) bool { return index[i].begin < index[j].begin }) {
		return false
	}
	t.index, t.indexed, t.indexErr = index, true, nil
	return true
}
