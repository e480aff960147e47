package elfsym

import (
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// TestScanMatchesSorted: on this machine's libraries, and on libc6-dbg's
// debug file, a lookup by scanning the entries names the same symbol as a
// lookup in the sorted table, at every symbol's start, middle and end,
// just before it, and at random pcs in the code.
func TestScanMatchesSorted(t *testing.T) {
	paths, _ := filepath.Glob("/lib/x86_64-linux-gnu/lib*.so.*")
	debug, _ := filepath.Glob("/usr/lib/debug/.build-id/*/*.debug")
	paths = append(paths[:min(len(paths), 12)], debug[:min(len(debug), 4)]...)
	if len(paths) == 0 {
		t.Skip("no libraries")
	}
	r := rand.New(rand.NewSource(1))
	checked := 0
	for _, p := range paths {
		o, err := object.OpenObject(p)
		if err != nil {
			continue
		}
		for _, name := range []string{".symtab", ".dynsym"} {
			raw, sorted := ReadSymbolsTable(o, o.Elf.Section(name)), ReadSymbols(o, name)
			if raw == nil || sorted == nil || len(sorted.Syms) == 0 {
				continue
			}
			var pcs []uint64
			for i := 0; i < len(sorted.Syms); i += 1 + len(sorted.Syms)/30 {
				s := sorted.Syms[i]
				pcs = append(pcs, s.Addr, s.Addr+s.Size/2, s.Addr+s.Size, s.Addr-1)
			}
			if text := o.Elf.Section(".text"); text != nil && text.Size > 0 {
				for i := 0; i < 40; i++ {
					pcs = append(pcs, text.Addr+uint64(r.Int63n(int64(text.Size))))
				}
			}
			for _, pc := range pcs {
				a, b := raw.scanLookup(pc), sorted.Lookup(pc)
				if (a == nil) != (b == nil) || a != nil && (a.Addr != b.Addr || raw.Name(a) != sorted.Name(b)) {
					t.Fatalf("%s %s pc %#x: scan gives %v, sorted %v", p, name, pc, describe(raw, a), describe(sorted, b))
				}
				checked++
			}
		}
		o.Close()
	}
	if checked < 1000 {
		t.Fatalf("only %d lookups compared", checked)
	}
	t.Logf("%d lookups compared", checked)
}

func describe(t *SymbolTable, s *ElfSymbol) string {
	if s == nil {
		return "nothing"
	}
	return t.Name(s)
}
