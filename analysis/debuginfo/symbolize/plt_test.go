package symbolize

import (
	"debug/elf"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// pltAddrs returns every step-th address of the file's PLT sections.
func pltAddrs(t *testing.T, path string, step uint64) []uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pcs []uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Type == elf.SHT_PROGBITS && strings.HasPrefix(s.Name, ".plt") {
			for a := s.Addr; a < s.Addr+s.Size; a += step {
				pcs = append(pcs, a)
			}
		}
	}
	return pcs
}

// TestPLTNamesMatchGDB compares the names of addresses in PLT stubs with
// gdb's ("printf@plt", "operator new(unsigned long)@plt",
// "*ABS*+0xa0be0@plt" for libc's IRELATIVE slots, nothing for PLT0): lazy
// and -z now programs, IBT PLTs (.plt.sec), C++, and the system's libc and
// libstdc++.
func TestPLTNamesMatchGDB(t *testing.T) {
	requireTools(t, "gcc", "g++", "gdb")
	dir := t.TempDir()
	so := compile(t, "g++", dir, "symtab_only.o", "-O2", "-c", "symtab_only.cpp")
	type target struct {
		name, compiler string
		args           []string
		cpp            bool
		path           string // a system library instead of a build
	}
	targets := []target{
		{name: "c-lazy", compiler: "gcc", args: []string{"-g", "-O2", "assert.c"}},
		{name: "c-now", compiler: "gcc", args: []string{"-g", "-O2", "-Wl,-z,now", "assert.c"}},
		{name: "c-ibtplt", compiler: "gcc", args: []string{"-O2", "-Wl,-z,ibtplt", "assert.c"}},
		{name: "cpp", compiler: "g++", args: []string{"-g", "-O2", "names.cpp", so}, cpp: true},
		{name: "libc", path: "/lib/x86_64-linux-gnu/libc.so.6"},
		{name: "libstdc++", path: "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", cpp: true},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			path, step := tg.path, uint64(1)
			if path == "" {
				path = compile(t, tg.compiler, dir, tg.name, tg.args...)
			} else {
				if !object.IsRegular(path) {
					t.Skipf("%s not installed", path)
				}
				step = 5
			}
			syms, done := openSymbols(t, path, nil)
			defer done()
			pcs := pltAddrs(t, path, step)
			if len(pcs) == 0 {
				t.Fatal("no PLT")
			}
			named := 0
			for _, levels := range gdbSweep(t, path, pcs) {
				if len(levels) == 1 && strings.HasSuffix(levels[0].function, "@plt") {
					named++
				}
			}
			if named < len(pcs)/3 {
				t.Fatalf("gdb names only %d of %d PLT addresses", named, len(pcs))
			}
			sweep(t, path, syms, pcs, tg.cpp)
		})
	}
}

// TestSymtabNamesMatchGDB samples libstdc++'s code, named from its symbol
// table alone (no debug file installed), against gdb: gdb demangles
// minimal symbols with the standard substitutions expanded
// (std::basic_ostream<char, std::char_traits<char> >, not std::ostream).
func TestSymtabNamesMatchGDB(t *testing.T) {
	requireTools(t, "gdb")
	lib := "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
	if !object.IsRegular(lib) {
		t.Skipf("%s not installed", lib)
	}
	syms, done := openSymbols(t, lib, nil)
	defer done()
	if syms.HasDWARF() {
		t.Skip("libstdc++ has debug info here: its names come from DWARF")
	}
	sweep(t, lib, syms, textAddrs(t, lib, 97), true)
}
