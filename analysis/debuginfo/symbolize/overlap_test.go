package symbolize

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOverlappingUnitsFirstWins: two C++ units that both emit Stage<N>::run
// (one by explicit instantiation, one because it takes its address, as a
// unity build does) both describe the one copy the linker kept. gdb maps
// the address to the unit first in .debug_info; so must Lookup, for every
// stage, as gdb's `info line` says.
func TestOverlappingUnitsFirstWins(t *testing.T) {
	dir := t.TempDir()
	stage := "template <int N> struct Stage {\n\t__attribute__((noinline)) static long run(long x) { return x * (N + 1) + 1; }\n};\n"
	os.WriteFile(filepath.Join(dir, "a.cpp"), []byte(stage+"template struct Stage<0>;\nusing fn = long (*)(long);\nfn table[3] = {&Stage<0>::run, &Stage<1>::run, &Stage<2>::run};\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.cpp"), []byte(stage+"template struct Stage<1>;\ntemplate struct Stage<2>;\n"), 0o644)
	lib := filepath.Join(dir, "libov.so")
	cmd := exec.Command("g++", "-g", "-O2", "-fPIC", "-shared", "a.cpp", "b.cpp", "-o", lib)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	f, err := elf.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	s, done := openSymbols(t, lib, nil)
	defer done()
	lineRE := regexp.MustCompile(`Line \d+ of "([^"]+)"`)
	n := 0
	for _, sym := range syms {
		if !strings.HasPrefix(sym.Name, "_ZN5StageILi") {
			continue
		}
		n++
		out, err := exec.Command("gdb", "-nx", "-batch", "-ex", fmt.Sprintf("info line *%#x", sym.Value), lib).CombinedOutput()
		m := lineRE.FindSubmatch(out)
		if err != nil || m == nil {
			t.Fatalf("gdb info line %s: %v\n%s", sym.Name, err, out)
		}
		locs := s.Lookup(sym.Value)
		if len(locs) == 0 || filepath.Base(locs[0].File) != filepath.Base(string(m[1])) {
			t.Errorf("%s at %#x: Lookup %s; gdb says %s", sym.Name, sym.Value, formatLocs(locs), m[1])
		}
	}
	if n != 3 {
		t.Fatalf("%d Stage<N>::run symbols in %s, want 3", n, lib)
	}
}
