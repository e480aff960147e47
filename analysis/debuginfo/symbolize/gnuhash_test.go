package symbolize

import (
	"fmt"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/elfsym"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

const systemLibc = "/lib/x86_64-linux-gnu/libc.so.6"

// TestDynHashLookups: glibc's libc.so.6 carries both a .gnu.hash and a
// System V .hash table over its .dynsym. Through either, every defined
// dynamic symbol is found with the definition a whole-table read gives
// (what symbolByName returned before the hash tables), and names that are
// not there are not found.
func TestDynHashLookups(t *testing.T) {
	o, err := object.OpenObject(systemLibc)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	full := elfsym.ReadSymbols(o, ".dynsym")
	ref := full.Names()
	if len(ref) < 1000 {
		t.Fatalf("only %d names in libc's .dynsym", len(ref))
	}
	for _, sec := range []string{".gnu.hash", ".hash"} {
		s := o.Elf.Section(sec)
		if s == nil {
			t.Fatalf("%s: no %s section", systemLibc, sec)
		}
		h := elfsym.ParseDynHash(o.RawSection(s), sec == ".gnu.hash", o.Elf.Class, elfsym.ReadSymbolsTable(o, o.Elf.Sections[s.Link]))
		if h == nil {
			t.Fatalf("%s does not parse", sec)
		}
		checked := 0
		for name, addr := range ref {
			got, global, ok := h.Global(name)
			if !ok || got != addr {
				t.Errorf("%s: %s = %#x, %v; whole table says %#x", sec, name, got, ok, addr)
				continue
			}
			if want := full.IsGlobal(name, addr); global != want {
				t.Errorf("%s: %s global = %v, whole table says %v", sec, name, global, want)
			}
			checked++
		}
		for i := 0; i < 2000; i++ {
			name := fmt.Sprintf("no_such_symbol_%d", i)
			if _, _, ok := h.Global(name); ok {
				t.Errorf("%s: found %s", sec, name)
			}
		}
		t.Logf("%s: %d names agree", sec, checked)
	}
}

// TestSymbolByNameFromHash: a module's symbolByName answers from the hash
// table exactly what reading its tables whole answers, for every name in
// libc's .dynsym and in its libc6-dbg .symtab (locals included).
func TestSymbolByNameFromHash(t *testing.T) {
	o, err := object.OpenObject(systemLibc)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	dbg, err := object.OpenObject(libcDebugFile(t, o))
	if err != nil {
		t.Fatal(err)
	}
	defer dbg.Close()
	s := NewSymbols(o, dbg)
	if s.libraryHash() == nil {
		t.Fatal("libc.so.6 not recognized as a shared library with a hash table")
	}
	tables := []*elfsym.SymbolTable{elfsym.ReadSymbols(o, ".dynsym"), elfsym.ReadSymbols(dbg, ".symtab")}
	names := map[string]bool{}
	for _, tab := range tables {
		for n := range tab.Names() {
			names[n] = true
		}
	}
	for name := range names {
		var want uint64
		var wantGlobal, wantOK bool
		for _, tab := range tables {
			a, found := tab.Names()[name]
			if !found {
				continue
			}
			if tab.IsGlobal(name, a) {
				want, wantGlobal, wantOK = a, true, true
				break
			}
			if !wantOK {
				want, wantOK = a, true
			}
		}
		a, g, ok := s.symbolByName(name)
		if a != want || g != wantGlobal || ok != wantOK {
			t.Errorf("%s: %#x global=%v ok=%v; whole tables: %#x global=%v ok=%v", name, a, g, ok, want, wantGlobal, wantOK)
		}
	}
	t.Logf("%d names agree", len(names))
}

// systemLibcDebugFile is libc6-dbg's file for the system's libc.
func systemLibcDebugFile(t *testing.T) string {
	libc, err := object.OpenObject(systemLibc)
	if err != nil {
		t.Fatal(err)
	}
	defer libc.Close()
	return libcDebugFile(t, libc)
}

// libcDebugFile is libc6-dbg's file for o (installed by .ci/test).
func libcDebugFile(t *testing.T, o *object.Object) string {
	id := o.BuildID()
	if len(id) < 2 {
		t.Fatal("libc has no build-id")
	}
	return fmt.Sprintf("/usr/lib/debug/.build-id/%02x/%x.debug", id[0], id[1:])
}
