package symbolize

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwpindex"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// llvmDWP is the first llvm-dwp found; "" if none.
func llvmDWP() string {
	for _, name := range []string{"llvm-dwp", "llvm-dwp-16", "llvm-dwp-15", "llvm-dwp-14"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestSplitDWARFPackage: two units built with -gsplit-dwarf, packed by
// llvm-dwp into pack.dwp beside the binary, their .dwo files deleted,
// symbolize every address of every function exactly like the plain -g
// build: functions, files, lines and inline levels.
func TestSplitDWARFPackage(t *testing.T) {
	dwp := llvmDWP()
	if dwp == "" {
		t.Skip("llvm-dwp not installed (apt-get install llvm-14)")
	}
	src, _ := filepath.Abs("testdata/src")
	build := func(dir string, flags ...string) string {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"pack_main.c", "pack_lib.c"} {
			data, err := os.ReadFile(filepath.Join(src, f))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, f), data, 0o644)
			args := append([]string{"-O0", "-c", f}, flags...)
			if out, err := runIn(dir, "gcc", args...); err != nil {
				t.Fatalf("gcc %v: %v\n%s", args, err, out)
			}
		}
		if out, err := runIn(dir, "gcc", "-o", "pack", "pack_main.o", "pack_lib.o"); err != nil {
			t.Fatalf("link: %v\n%s", err, out)
		}
		return filepath.Join(dir, "pack")
	}
	root := t.TempDir()
	plain := build(filepath.Join(root, "plain"), "-g")
	splitDir := filepath.Join(root, "split")
	split := build(splitDir, "-g", "-gsplit-dwarf")
	if out, err := runIn(splitDir, dwp, "-o", "pack.dwp", "pack_main.dwo", "pack_lib.dwo"); err != nil {
		t.Fatalf("llvm-dwp: %v\n%s", err, out)
	}
	for _, f := range []string{"pack_main.dwo", "pack_lib.dwo"} {
		os.Remove(filepath.Join(splitDir, f))
	}

	want, got := openPackSymbols(t, plain), openPackSymbols(t, split)
	if got.dwarfData().Dwo.Pkg() == nil {
		t.Fatal("pack.dwp beside the binary not opened")
	}
	eo, err := elf.Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	defer eo.Close()
	syms, _ := eo.Symbols()
	checked := map[string]int{}
	inlined := 0
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 || !strings.Contains("main twice lib_sum", s.Name) {
			continue
		}
		for pc := s.Value; pc < s.Value+s.Size; pc++ {
			w, g := fmtLocations(want.Lookup(pc)), fmtLocations(got.Lookup(pc))
			if w != g {
				t.Fatalf("pc %#x: package gives\n%s\nplain build gives\n%s", pc, g, w)
			}
			if !strings.Contains(w, ".c:") {
				t.Fatalf("pc %#x: no line in the plain build: %s", pc, w)
			}
			if strings.Contains(w, "inlined") {
				inlined++
			}
			checked[s.Name]++
		}
	}
	if len(checked) != 3 || inlined == 0 {
		t.Errorf("checked %v with %d inlined pcs: want main, twice, lib_sum and inline levels", checked, inlined)
	}
	// The inlined accessors of both units come from the package.
	for _, name := range []string{"twice", "lib_sum"} {
		found := false
		for _, s := range syms {
			if s.Name != name {
				continue
			}
			for pc := s.Value; pc < s.Value+s.Size; pc++ {
				if locs := got.Lookup(pc); len(locs) == 2 && locs[0].Inlined && locs[1].Function == name {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: no pc with an inlined frame over it", name)
		}
	}
}

// runIn runs a command in dir, killed after a minute (llvm-dwp loops on
// some inputs).
func runIn(dir, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.WaitDelay = time.Second
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
		}
	}()
	return cmd.CombinedOutput()
}

func openPackSymbols(t *testing.T, path string) *Symbols {
	t.Helper()
	o, err := object.OpenObject(path)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSymbols(o, nil)
	t.Cleanup(func() { s.Close(); o.Close() })
	return s
}

func fmtLocations(locs []Location) string {
	var b strings.Builder
	for _, l := range locs {
		fmt.Fprintf(&b, "%s %s:%d inlined=%v\n", l.Function, filepath.Base(l.File), l.Line, l.Inlined)
	}
	return b.String()
}

// FuzzDWPIndex runs the package index parser and lookups on arbitrary
// bytes (the seed is pack.dwp's .debug_cu_index, as llvm-dwp 14 wrote it).
func FuzzDWPIndex(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, sig uint64) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			x, err := dwpindex.ParseDWPIndex(data, binary.LittleEndian)
			if err != nil {
				return
			}
			row, ok := x.Lookup(sig)
			for sect := 0; sect <= dwpindex.MaxDWSect+1; sect++ {
				if c, ok2 := x.Contribution(row, sect); ok && ok2 {
					c.Slice(data)
				}
			}
			for r := uint32(0); r <= x.Nunits+1 && r < 64; r++ {
				x.Contribution(r, dwpindex.DwSectInfo)
			}
		})
	})
}
