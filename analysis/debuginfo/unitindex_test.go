package debuginfo

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/indexcache"
)

// TestUnitIndexCache: libc6-dbg's unit address index, built once, is read
// back from the index cache equal to a fresh build; an entry that does not
// verify is rebuilt; and a lookup through the cached index symbolizes as
// the built one does.
func TestUnitIndexCache(t *testing.T) {
	path := systemLibcDebugFile(t)
	dir := t.TempDir()
	open := func() (*dwarfFile, func()) {
		o, err := OpenObject(path)
		if err != nil {
			t.Fatal(err)
		}
		df, err := openDWARF(o)
		if err != nil || df == nil {
			t.Fatalf("openDWARF: %v", err)
		}
		if err := df.index(); err != nil {
			t.Fatal(err)
		}
		return df, func() { o.Close() }
	}
	SetIndexCache(nil)
	built, closeBuilt := open()
	defer closeBuilt()
	if len(built.units) < 100 || len(built.ranges) < 100 {
		t.Fatalf("libc6-dbg: %d units, %d ranges", len(built.units), len(built.ranges))
	}
	SetIndexCache(indexcache.New(dir, 0))
	defer SetIndexCache(nil)
	first, c1 := open() // builds and stores
	c1()
	entries, _ := filepath.Glob(filepath.Join(dir, "*unitindex*.idx"))
	if len(entries) != 1 {
		t.Fatalf("unit index entries: %v", entries)
	}
	loaded, c2 := open()
	defer c2()
	for _, df := range []*dwarfFile{first, loaded} {
		if !reflect.DeepEqual(df.units, built.units) || !reflect.DeepEqual(df.ranges, built.ranges) || !reflect.DeepEqual(df.maxHi, built.maxHi) {
			t.Fatal("the cached unit index differs from the built one")
		}
	}
	b, _ := os.ReadFile(entries[0])
	b[len(b)-3] ^= 1
	os.WriteFile(entries[0], b, 0o644)
	if !func() bool { df, c := open(); defer c(); return reflect.DeepEqual(df.ranges, built.ranges) }() {
		t.Error("index from a damaged entry")
	}
	if nb, _ := os.ReadFile(entries[0]); string(nb) == string(b) {
		t.Error("damaged unit index not rebuilt")
	}
	// A symbolization through the loaded index.
	pc := built.ranges[len(built.ranges)/2].lo
	if got, want := loaded.unitsFor(pc), built.unitsFor(pc); !reflect.DeepEqual(got, want) || len(got) == 0 {
		t.Errorf("unitsFor(%#x): cached %v, built %v", pc, got, want)
	}
}
