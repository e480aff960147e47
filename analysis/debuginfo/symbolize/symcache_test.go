package symbolize

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/elfsym"
	"github.com/faultline-dev/faultline/analysis/debuginfo/indexcache"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// symbolRows renders a table's symbols with their names, for comparison.
func symbolRows(t *elfsym.SymbolTable) []string {
	if t == nil {
		return nil
	}
	out := make([]string, len(t.Syms))
	for i := range t.Syms {
		s := &t.Syms[i]
		out[i] = strings.Join([]string{t.Name(s), hexU(s.Addr), hexU(s.Size), hexU(uint64(s.Bind)), hexU(uint64(s.Shndx)), map[bool]string{true: "fun"}[s.IsFun]}, " ")
	}
	return out
}

func hexU(v uint64) string { return strconv.FormatUint(v, 16) }

func sameRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d symbols, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: symbol %d is %q, want %q", what, i, got[i], want[i])
		}
	}
}

// TestSymbolIndexCache: the sorted symbol index of libc (.dynsym and its
// PLT's synthetic symbols), of libc6-dbg's .symtab and of libstdc++ is
// stored on first use and read back by the next open without decoding
// the tables, symbol for symbol what building it gives; an index that
// does not fit the file is refused and rebuilt.
func TestSymbolIndexCache(t *testing.T) {
	objects := map[string]string{"libc": systemLibc, "libc-dbg": systemLibcDebugFile(t), "libstdc++": "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}
	build := func(o *object.Object) *elfsym.SymbolTable {
		t := elfsym.ReadSymbols(o, ".symtab")
		if t == nil || len(t.Syms) == 0 {
			t = elfsym.ReadSymbols(o, ".dynsym")
		}
		return t.WithSynthetic(o, elfsym.PltSymbols(o))
	}
	dir := t.TempDir()
	object.SetIndexCache(indexcache.New(dir, 0))
	defer object.SetIndexCache(nil)
	synthetic := 0
	for name, path := range objects {
		o, err := object.OpenObject(path)
		if err != nil {
			t.Fatal(err)
		}
		want := symbolRows(build(o))
		if len(want) < 1000 {
			t.Fatalf("%s: only %d symbols", name, len(want))
		}
		for _, r := range want {
			if strings.Contains(r, "@plt ") {
				synthetic++
			}
		}
		sameRows(t, name+", first (stored)", symbolRows(elfsym.CachedSymbols(o, "bin", func() *elfsym.SymbolTable { return build(o) })), want)
		o.Close()
		o, err = object.OpenObject(path)
		if err != nil {
			t.Fatal(err)
		}
		warm := elfsym.CachedSymbols(o, "bin", func() *elfsym.SymbolTable {
			t.Fatalf("%s: the index was rebuilt, not read from the cache", name)
			return nil
		})
		sameRows(t, name+", from the cache", symbolRows(warm), want)
		o.Close()
	}
	if synthetic == 0 {
		t.Error("no NAME@plt symbol went through the cache")
	}
	entries, _ := filepath.Glob(filepath.Join(dir, "*-syms"+elfsym.SymIndexVersion+"-bin-*.idx"))
	if len(entries) != len(objects) {
		t.Errorf("%d symbol index entries in the cache, want %d", len(entries), len(objects))
	}
}

// TestDecodeSymbolsRefusesMisfits: an index with names past the string
// table, a count that does not match its length, or an unknown source is
// not used.
func TestDecodeSymbolsRefusesMisfits(t *testing.T) {
	o, err := object.OpenObject(systemLibc)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	tab := elfsym.ReadSymbols(o, ".dynsym").WithSynthetic(o, elfsym.PltSymbols(o))
	good := elfsym.EncodeSymbols(tab)
	if _, ok := elfsym.DecodeSymbols(o, good); !ok {
		t.Fatal("a fresh index does not decode")
	}
	bad := func(what string, edit func(b []byte) []byte) {
		b := edit(append([]byte(nil), good...))
		if _, ok := elfsym.DecodeSymbols(o, b); ok {
			t.Errorf("%s: decoded", what)
		}
	}
	bad("truncated", func(b []byte) []byte { return b[:len(b)-1] })
	bad("count too big", func(b []byte) []byte { b[4]++; return b })
	bad("unknown source", func(b []byte) []byte { b[0] = 9; return b })
	bad("name past the string table", func(b []byte) []byte {
		for i := range 4 {
			b[elfsym.SymIndexHeader+i] = 0xff
		}
		return b
	})
	bad("empty", func(b []byte) []byte { return nil })
}

// FuzzDecodeSymbols: any bytes give a table or a refusal, never a panic
// (seed corpus: testdata/fuzz/FuzzDecodeSymbols, assert_abort's index).
func FuzzDecodeSymbols(f *testing.F) {
	o, err := object.OpenObject(systemLibc)
	if err != nil {
		f.Fatal(err)
	}
	defer o.Close()
	f.Add(elfsym.EncodeSymbols(elfsym.ReadSymbols(o, ".dynsym").WithSynthetic(o, elfsym.PltSymbols(o))))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			if tab, ok := elfsym.DecodeSymbols(o, b); ok && tab != nil {
				for i := range tab.Syms {
					tab.Name(&tab.Syms[i])
				}
			}
		})
	})
}
