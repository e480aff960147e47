package symbolize

import (
	"bytes"
	"slices"
	"sync"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
	"github.com/faultline-dev/faultline/analysis/debuginfo/indexcache"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// TestLazySection: libc6-dbg's compressed .debug_info read progressively
// by concurrent readers and a prefetch gives the bytes of decompressing it
// whole; a prefix read is stored in the index cache as a prefix, and the
// next process reads that prefix from the cache and decompresses again
// only past it.
func TestLazySection(t *testing.T) {
	path := systemLibcDebugFile(t)
	object.SetIndexCache(nil)
	whole, err := object.OpenObject(path)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	want, _, ok := whole.Section(".debug_info")
	if !ok {
		t.Fatal("no .debug_info")
	}
	object.SetIndexCache(indexcache.New(t.TempDir(), 0))
	defer object.SetIndexCache(nil)

	o, err := object.OpenObject(path)
	if err != nil {
		t.Fatal(err)
	}
	l := o.Lazy(".debug_info")
	if l.Size() != uint64(len(want)) || l.Done() != 0 {
		t.Fatalf("lazy .debug_info: size %d, %d done before any read", l.Size(), l.Done())
	}
	third := l.Size() / 3
	l.Prefetch(third)
	var wg sync.WaitGroup
	for i := uint64(1); i <= 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			end := third * i / 8
			if b := l.Upto(end); uint64(len(b)) < end || !bytes.Equal(b[:end], want[:end]) {
				t.Errorf("Upto(%d): %d bytes, or different ones", end, len(b))
			}
		}()
	}
	wg.Wait()
	if d := l.Done(); d < third || d > third+1<<20 {
		t.Errorf("%d of %d bytes decompressed to read a third", d, l.Size())
	}
	o.Close()

	again, err := object.OpenObject(path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	l = again.Lazy(".debug_info")
	if b := l.Upto(third); !bytes.Equal(b[:third], want[:third]) {
		t.Fatal("the cached prefix differs")
	}
	if b := l.All(); !bytes.Equal(b, want) {
		t.Fatal("reading past the cached prefix gave other bytes")
	}
}

// TestArangesLookup: a lookup in libc6-dbg walks .debug_info only as far
// as the unit .debug_aranges names, decompresses no more than that, and
// names the units the whole-file index names.
func TestArangesLookup(t *testing.T) {
	path := systemLibcDebugFile(t)
	object.SetIndexCache(nil)
	o, err := object.OpenObject(path)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	df, err := dwarfreader.OpenDWARF(o)
	if err != nil || df == nil {
		t.Fatalf("OpenDWARF: %v", err)
	}
	libc, err := object.OpenObject(systemLibc)
	if err != nil {
		t.Fatal(err)
	}
	defer libc.Close()
	syms := NewSymbols(libc, o)
	addr, ok := syms.SymbolAddr("abort")
	if !ok {
		t.Fatal("no abort")
	}
	got := df.UnitsFor(addr + 4)
	if len(got) == 0 {
		t.Fatal("no unit for abort")
	}
	if walked, done := df.UnitsWalked(), df.Sec.Info.Done(); done > df.Sec.Info.Size()/2 || walked > len(df.Units())/2 {
		t.Errorf("abort's lookup walked %d units and decompressed %d of %d bytes", walked, done, df.Sec.Info.Size())
	}
	full, err := dwarfreader.OpenDWARF(o)
	if err != nil || full.Index() != nil {
		t.Fatal(err)
	}
	for i, rg := range full.Ranges {
		if i%97 != 0 {
			continue
		}
		pc := rg.Lo + (rg.Hi-rg.Lo)/2
		if a, b := df.UnitsFor(pc), unitsFromIndex(full, pc); len(a) == 0 || a[0] != slices.Min(b) {
			t.Errorf("pc %#x: aranges give units %v, the unit index %v", pc, a, b)
		}
	}
}

// unitsFromIndex is what UnitsFor answered before aranges were read: the
// units of the whole-file index containing pc.
func unitsFromIndex(df *dwarfreader.DwarfFile, pc uint64) []int {
	var out []int
	for _, rg := range df.Ranges {
		if rg.Lo <= pc && pc < rg.Hi {
			out = append(out, rg.Unit())
		}
	}
	return out
}
