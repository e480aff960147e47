package frame

import (
	"debug/elf"
	"encoding/binary"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// memStore is an IndexStore in memory that counts what it is given.
type memStore struct {
	load   []byte
	stores int
	stored []byte
}

func (m *memStore) Load() []byte   { return m.load }
func (m *memStore) Store(b []byte) { m.stores++; m.stored = b }

// TestIndexStore: glibc's .eh_frame searched without .eh_frame_hdr builds
// its FDE index once and offers it to the store; a table given that index
// finds the same FDE for every FDE readelf lists without walking the
// section (nothing is stored again); an index that does not fit the
// section (cut short, an offset past its end, out of order) is rebuilt.
func TestIndexStore(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	f, err := elf.Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".eh_frame")
	data, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	fdes := readelfFrames(t, libc)
	table := func(st IndexStore) *Table {
		tab := NewEHFrame(data, s.Addr, nil, 0, binary.LittleEndian, 8)
		tab.Index = st
		return tab
	}
	ranges := func(tab *Table) []uint64 {
		var out []uint64
		for _, w := range fdes {
			if w.lo == w.hi {
				continue
			}
			fde, err := tab.FDEFor(w.lo)
			if err != nil {
				t.Fatalf("FDEFor(%#x): %v", w.lo, err)
			}
			out = append(out, fde.Begin, fde.End)
		}
		return out
	}
	first := &memStore{}
	want := ranges(table(first))
	if first.stores != 1 || len(first.stored) == 0 || len(want) < 1000 {
		t.Fatalf("stored %d times (%d bytes) over %d FDEs", first.stores, len(first.stored), len(want)/2)
	}
	check := func(what string, index []byte, rebuilt bool) {
		st := &memStore{load: index}
		got := ranges(table(st))
		if len(got) != len(want) {
			t.Fatalf("%s: %d ranges, want %d", what, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: FDE %d: %#x, want %#x", what, i/2, got[i], want[i])
			}
		}
		if (st.stores == 1) != rebuilt {
			t.Errorf("%s: stored %d times, want the index rebuilt: %v", what, st.stores, rebuilt)
		}
	}
	check("stored index", first.stored, false)
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), first.stored...)) }
	check("cut short", edit(func(b []byte) []byte { return b[:len(b)-1] }), true)
	check("offset past the end", edit(func(b []byte) []byte {
		binary.LittleEndian.PutUint64(b[16:], uint64(len(data)))
		return b
	}), true)
	check("out of order", edit(func(b []byte) []byte {
		binary.LittleEndian.PutUint64(b[0:], ^uint64(0)-1)
		binary.LittleEndian.PutUint64(b[8:], ^uint64(0))
		return b
	}), true)
}

// FuzzSetIndex: any stored bytes are taken or refused, never a panic, and
// a taken index never sends a lookup outside the section (seed corpus:
// testdata/fuzz/FuzzSetIndex).
func FuzzSetIndex(f *testing.F) {
	data := make([]byte, 4096)
	f.Add(encodeIndex([]indexEntry{{begin: 0x1000, end: 0x1100, off: 16}}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			tab := NewEHFrame(data, 0, nil, 0, binary.LittleEndian, 8)
			if tab.setIndex(b) {
				for _, e := range tab.index {
					if e.off >= uint64(len(data)) {
						t.Fatalf("offset %#x taken for a %d-byte section", e.off, len(data))
					}
				}
				tab.FDEFor(0x1000)
			}
		})
	})
}
