package symbolize

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
	"github.com/faultline-dev/faultline/analysis/debuginfo/indexcache"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// TestUnitIndexCache: libc6-dbg's unit address index, built once, is read
// back from the index cache equal to a fresh build; an entry that does not
// verify is rebuilt; and a lookup through the cached index symbolizes as
// the built one does.
func TestUnitIndexCache(t *testing.T) {
	path := systemLibcDebugFile(t)
	dir := t.TempDir()
	open := func() (*dwarfreader.DwarfFile, func()) {
		o, err := object.OpenObject(path)
		if err != nil {
			t.Fatal(err)
		}
		df, err := dwarfreader.OpenDWARF(o)
		if err != nil || df == nil {
			t.Fatalf("openDWARF: %v", err)
		}
		if err := df.Index(); err != nil {
			t.Fatal(err)
		}
		return df, func() { o.Close() }
	}
	object.SetIndexCache(nil)
	built, closeBuilt := open()
	defer closeBuilt()
	if len(built.Units()) < 100 || len(built.Ranges) < 100 {
		t.Fatalf("libc6-dbg: %d units, %d ranges", len(built.Units()), len(built.Ranges))
	}
	object.SetIndexCache(indexcache.New(dir, 0))
	defer object.SetIndexCache(nil)
	first, c1 := open() // builds and stores
	c1()
	entries, _ := filepath.Glob(filepath.Join(dir, "*unitindex*.idx"))
	if len(entries) != 1 {
		t.Fatalf("unit index entries: %v", entries)
	}
	loaded, c2 := open()
	defer c2()
	for _, df := range []*dwarfreader.DwarfFile{first, loaded} {
		if !reflect.DeepEqual(df.Units(), built.Units()) || !reflect.DeepEqual(df.Ranges, built.Ranges) || !reflect.DeepEqual(df.MaxHi, built.MaxHi) {
			t.Fatal("the cached unit index differs from the built one")
		}
	}
	b, _ := os.ReadFile(entries[0])
	b[len(b)-3] ^= 1
	os.WriteFile(entries[0], b, 0o644)
	if !func() bool { df, c := open(); defer c(); return reflect.DeepEqual(df.Ranges, built.Ranges) }() {
		t.Error("index from a damaged entry")
	}
	if nb, _ := os.ReadFile(entries[0]); string(nb) == string(b) {
		t.Error("damaged unit index not rebuilt")
	}
	// A symbolization through the loaded index.
	pc := built.Ranges[len(built.Ranges)/2].Lo
	if got, want := loaded.UnitsFor(pc), built.UnitsFor(pc); !reflect.DeepEqual(got, want) || len(got) == 0 {
		t.Errorf("unitsFor(%#x): cached %v, built %v", pc, got, want)
	}
}
