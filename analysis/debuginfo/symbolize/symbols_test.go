package symbolize

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// TestCoreBacktraceMatchesGDB dumps real cores of crashing programs (C and
// C++, -O0 and -O2, DWARF 4 and 5) and checks that, for every frame of
// gdb's bt, Lookup(pc - bias (- 1 above frame 0)) gives the same function,
// file and line for every inline level — including libc's frames through
// /usr/lib/debug/.build-id.
func TestCoreBacktraceMatchesGDB(t *testing.T) {
	requireTools(t, "gcc", "g++", "gdb")
	type build struct {
		Name     string
		Compiler string
		Args     []string
		Cpp      bool
		Want     []string // functions that must appear in the backtrace
	}
	builds := []build{
		{"assert-O0-dwarf5", "gcc", []string{"-g", "-O0", "assert.c"}, false, []string{"__GI_abort", "check", "compute", "main"}},
		{"assert-O2-dwarf5", "gcc", []string{"-g", "-O2", "assert.c"}, false, []string{"__pthread_kill_implementation", "__GI_raise", "check", "compute", "main"}},
		{"assert-O2-dwarf4", "gcc", []string{"-gdwarf-4", "-O2", "assert.c"}, false, []string{"check", "compute", "main"}},
		{"assert-O2-abs", "gcc", []string{"-g", "-O2", "ABS/assert.c"}, false, []string{"check"}},
		{"names-O2", "g++", []string{"-g", "-O2", "names.cpp", "SYMTAB_ONLY"}, true,
			[]string{"(anonymous namespace)::helper", "relay(int, void (*)(int))", "symtab_only", "Client::~Client", "inlined_step", "run", "operator()", "main"}},
		{"names-O0-dwarf4", "g++", []string{"-gdwarf-4", "-O0", "names.cpp", "SYMTAB_ONLY"}, true,
			[]string{"ns::Foo<int>::get", "Client::~Client", "operator()"}},
	}
	for _, b := range builds {
		t.Run(b.Name, func(t *testing.T) {
			dir := t.TempDir()
			src, _ := filepath.Abs("testdata/src")
			var args []string
			for _, a := range b.Args {
				switch {
				case a == "SYMTAB_ONLY":
					args = append(args, compile(t, "g++", dir, "symtab_only.o", "-O2", "-c", "symtab_only.cpp"))
				case strings.HasPrefix(a, "ABS/"):
					args = append(args, filepath.Join(src, a[4:]))
				default:
					args = append(args, a)
				}
			}
			prog := compile(t, b.Compiler, dir, "prog", args...)
			core := makeCore(t, prog)
			frames, maps := gdbCoreBacktrace(t, prog, core)
			seen := map[string]bool{}
			for i := 0; i < len(frames); {
				// The frames sharing one pc are the inline levels of one
				// physical frame.
				j := i + 1
				for j < len(frames) && frames[j].pc == frames[i].pc && !frames[j].tailCall {
					j++
				}
				group := frames[i:j]
				i = j
				module, start := moduleFor(t, maps, group[0].pc)
				if module == "" {
					t.Fatalf("frame #%d pc %#x: no mapping", group[0].index, group[0].pc)
				}
				syms, done := openSymbols(t, module, nil)
				pc := group[0].pc - loadBias(t, module, start)
				if group[0].index > 0 {
					pc--
				}
				locs := syms.Lookup(pc)
				done()
				if group[0].tailCall {
					// gdb's tail-call frames show only the innermost level.
					if len(locs) > 1 {
						locs = locs[:1]
					}
				}
				var want []gdbLevel
				for _, f := range group {
					want = append(want, gdbLevel{function: f.function, file: f.file, line: f.line})
					seen[f.function] = true
				}
				got := make([]gdbLevel, len(locs))
				for k, l := range locs {
					got[k] = gdbLevel{function: l.Function, file: l.File, line: l.Line}
				}
				if formatLevels(got) != formatLevels(want) {
					t.Errorf("frame #%d pc %#x (%s+%#x):\n gdb: %s\n  us: %s", group[0].index, group[0].pc,
						filepath.Base(module), pc, formatLevels(want), formatLevels(got))
				}
				for k, l := range locs {
					if l.Inlined != (k < len(locs)-1) && !group[0].tailCall {
						t.Errorf("frame #%d level %d: Inlined=%v", group[0].index, k, l.Inlined)
					}
				}
			}
			for _, fn := range b.Want {
				if !seen[fn] {
					t.Errorf("gdb's bt lacks %q; the test program no longer exercises it", fn)
				}
			}
		})
	}
}

// moduleFor finds the mapped file containing pc from gdb's mappings.
func moduleFor(t *testing.T, maps map[string]uint64, pc uint64) (string, uint64) {
	best, bestStart := "", uint64(0)
	for path, start := range maps {
		if start <= pc && start >= bestStart {
			best, bestStart = path, start
		}
	}
	return best, bestStart
}

// textAddrs returns every step-th address of the file's executable sections.
func textAddrs(t *testing.T, path string, step uint64) []uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pcs []uint64
	for _, s := range f.Sections {
		// PLT stubs get synthetic "name@plt" symbols from BFD in gdb; we
		// do not synthesize those (yet).
		if s.Flags&elf.SHF_EXECINSTR == 0 || s.Type != elf.SHT_PROGBITS || strings.HasPrefix(s.Name, ".plt") {
			continue
		}
		for a := s.Addr; a < s.Addr+s.Size; a += step {
			pcs = append(pcs, a)
		}
	}
	return pcs
}

// sweep compares Lookup with gdb at each address.
func sweep(t *testing.T, path string, syms *Symbols, pcs []uint64, cpp bool) {
	t.Helper()
	want := gdbSweep(t, path, pcs)
	bad := 0
	for _, pc := range pcs {
		levels, ok := want[pc]
		if !ok {
			t.Fatalf("gdb gave nothing for %#x", pc)
		}
		if cpp {
			for i := range levels {
				levels[i].function = removeParams(levels[i].function)
			}
		}
		locs := syms.Lookup(pc)
		got := make([]gdbLevel, len(locs))
		for k, l := range locs {
			got[k] = gdbLevel{function: l.Function, file: l.File, line: l.Line}
			if cpp && !l.FromDWARF {
				got[k].function = removeParams(l.Function)
			}
		}
		if len(levels) == 1 && levels[0].function == "" && levels[0].line == 0 {
			levels = nil
		}
		// A non-inlined function nested in another's DIE (a lambda's
		// operator() inside main) has main's block as its superblock, but
		// bt never shows that block: the frame ends at the subprogram.
		if n := len(locs); n > 0 && n < len(levels) && !locs[n-1].Inlined && locs[n-1].FromDWARF {
			levels = levels[:n]
		}
		if formatLevels(got) != formatLevels(levels) {
			if bad < 20 {
				t.Errorf("%s %#x:\n gdb: %s\n  us: %s", filepath.Base(path), pc, formatLevels(levels), formatLevels(got))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d addresses differ from gdb", bad, len(pcs))
	}
}

// TestSweepMatchesGDB compares every byte address of small programs' code
// with gdb's own view (python: block_for_pc, find_pc_line), for DWARF 4 and
// 5, compressed sections, and C++.
func TestSweepMatchesGDB(t *testing.T) {
	requireTools(t, "gcc", "g++", "gdb")
	dir := t.TempDir()
	so := compile(t, "g++", dir, "symtab_only.o", "-O2", "-c", "symtab_only.cpp")
	type build struct {
		Name, Compiler string
		Args           []string
		Cpp            bool
	}
	builds := []build{
		{"c-O2-dwarf5", "gcc", []string{"-g", "-O2", "assert.c"}, false},
		{"c-O2-dwarf4", "gcc", []string{"-gdwarf-4", "-O2", "assert.c"}, false},
		{"c-O0", "gcc", []string{"-g", "-O0", "assert.c"}, false},
		{"c-O2-gz-zlib", "gcc", []string{"-g", "-O2", "-gz=zlib", "assert.c"}, false},
		{"cpp-O2", "g++", []string{"-g", "-O2", "names.cpp", so}, true},
		{"cpp-O0-dwarf4", "g++", []string{"-gdwarf-4", "-O0", "names.cpp", so}, true},
		{"cpp-O3-gz-zstd", "g++", []string{"-g", "-O3", "OBJCOPY-ZSTD", "names.cpp", so}, true},
	}
	for _, b := range builds {
		t.Run(b.Name, func(t *testing.T) {
			var args []string
			zstd := false
			for _, a := range b.Args {
				if a == "OBJCOPY-ZSTD" {
					zstd = true
				} else {
					args = append(args, a)
				}
			}
			prog := compile(t, b.Compiler, dir, b.Name, args...)
			if zstd {
				// gcc 12 lacks -gz=zstd; binutils' objcopy writes ELFCOMPRESS_ZSTD.
				if out, err := exec.Command("objcopy", "--compress-debug-sections=zstd", prog).CombinedOutput(); err != nil {
					t.Skipf("objcopy cannot write zstd sections: %v %s", err, out)
				}
			}
			for _, a := range b.Args {
				if strings.HasPrefix(a, "-gz") || a == "OBJCOPY-ZSTD" {
					assertCompressed(t, prog)
				}
			}
			syms, done := openSymbols(t, prog, nil)
			defer done()
			if !syms.HasDWARF() {
				t.Fatal("no DWARF")
			}
			sweep(t, prog, syms, textAddrs(t, prog, 1), b.Cpp)
		})
	}
}

func assertCompressed(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".debug_info")
	if s == nil || s.Flags&elf.SHF_COMPRESSED == 0 {
		t.Fatalf("%s: .debug_info is not SHF_COMPRESSED", path)
	}
}

// TestLibcSweepMatchesGDB samples libc's code through its separate debug
// file (/usr/lib/debug/.build-id, Debian's libc6-dbg) against gdb.
func TestLibcSweepMatchesGDB(t *testing.T) {
	requireTools(t, "gdb")
	libc := "/lib/x86_64-linux-gnu/libc.so.6"
	if testing.Short() || !object.IsRegular(libc) {
		t.Skip("needs libc.so.6 and time")
	}
	syms, done := openSymbols(t, libc, nil)
	defer done()
	if !syms.HasDWARF() {
		t.Skip("libc6-dbg not installed")
	}
	sweep(t, libc, syms, textAddrs(t, libc, 401), false)
}

// TestLazyUnits checks that a lookup decodes only the units containing pc.
func TestLazyUnits(t *testing.T) {
	libc := "/lib/x86_64-linux-gnu/libc.so.6"
	if !object.IsRegular(libc) {
		t.Skip("no libc")
	}
	syms, done := openSymbols(t, libc, nil)
	defer done()
	if !syms.HasDWARF() {
		t.Skip("libc6-dbg not installed")
	}
	addr, ok := syms.SymbolAddr("abort")
	if !ok {
		t.Fatal("no abort symbol")
	}
	locs := syms.Lookup(addr + 4)
	if len(locs) == 0 || locs[len(locs)-1].Function != "__GI_abort" {
		t.Fatalf("Lookup(abort+4) = %s", formatLocs(locs))
	}
	df := syms.dwarfData()
	if len(df.Units()) < 100 {
		t.Fatalf("only %d units in libc's DWARF", len(df.Units()))
	}
	if n := len(df.Decoded); n > 3 {
		t.Errorf("decoded %d of %d units for one lookup", n, len(df.Units()))
	}
}

// TestSymtabOnly checks the .symtab fallback: demangled names with their
// parameter lists, as gdb prints minimal symbols, and SymbolAddr.
func TestSymtabOnly(t *testing.T) {
	requireTools(t, "g++", "nm")
	dir := t.TempDir()
	so := compile(t, "g++", dir, "symtab_only.o", "-O2", "-c", "symtab_only.cpp")
	prog := compile(t, "g++", dir, "prog", "-O2", "names.cpp", so)
	syms, done := openSymbols(t, prog, nil)
	defer done()
	if syms.HasDWARF() {
		t.Fatal("unexpected DWARF")
	}
	out, err := exec.Command("nm", "-C", prog).Output()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.SplitN(l, " ", 3)
		if len(f) != 3 || (f[1] != "T" && f[1] != "t") {
			continue
		}
		var addr uint64
		if _, err := fmtSscanHex(f[0], &addr); err != nil {
			continue
		}
		if f[2] != "relay(int, void (*)(int))" && f[2] != "symtab_only" && f[2] != "main" {
			continue
		}
		locs := syms.Lookup(addr + 1)
		if len(locs) != 1 || locs[0].Function != f[2] || locs[0].FuncLow != addr || locs[0].FromDWARF {
			t.Errorf("Lookup(%s+1) = %+v, want %q", f[0], locs, f[2])
		}
		found++
	}
	if found != 3 {
		t.Errorf("checked %d symbols, want 3", found)
	}
	if a, ok := syms.SymbolAddr("symtab_only"); !ok || a == 0 {
		t.Errorf("SymbolAddr(symtab_only) = %#x, %v", a, ok)
	}
}
