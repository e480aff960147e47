package analysis_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/internal/testgz"
)

// The debug-info lookup corpus (testdata/debuginfo/gen.sh): one program
// built plainly, stripped with a separate debug file, with split DWARF and
// with MiniDebugInfo, and a core of each crashing build.
const lookupCorpus = "../testdata/debuginfo"

func checkLookupLibs(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(lookupCorpus, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Libraries []struct{ Path, BuildID string }
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, l := range m.Libraries {
		o, err := object.OpenObject(l.Path)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%x", o.BuildID())
		o.Close()
		if got != l.BuildID {
			t.Fatalf("%s has build-id %s here but %s in the cores: run testdata/debuginfo/gen.sh", l.Path, got, l.BuildID)
		}
	}
}

func lookupFile(parts ...string) string {
	p, _ := filepath.Abs(filepath.Join(append([]string{lookupCorpus}, parts...)...))
	return p
}

func lookupCore(t *testing.T, name string) string {
	t.Helper()
	core := filepath.Join(t.TempDir(), name+".core")
	testgz.Gunzip(t, lookupFile("cores", name+".core.gz"), core)
	return core
}

// gdbBT runs gdb's bt on a core with extra settings.
func gdbBT(t *testing.T, bin, core string, settings ...string) *logs.GDBLog {
	t.Helper()
	args := []string{"-batch", "-nx", "-ex", "set pagination off", "-ex", "set width 0"}
	for _, s := range settings {
		args = append(args, "-ex", s)
	}
	args = append(args, "-ex", "thread apply all bt", bin, core)
	out, err := exec.Command("gdb", args...).Output()
	if err != nil {
		t.Fatalf("gdb: %v", err)
	}
	log, err := logs.ParseGDB(bytes.NewReader(out))
	if err != nil || len(log.Threads) == 0 {
		t.Fatalf("parsing gdb output (%v):\n%s", err, out)
	}
	return log
}

// frameNames lists a thread's frames as "function file:line", with
// inlined frames marked.
func frameNames(th analysis.Thread) []string {
	var out []string
	for _, f := range th.Frames {
		s := f.Function
		if f.File != "" {
			s += fmt.Sprintf(" %s:%d", f.File, f.Line)
		}
		if f.Inlined {
			s += " (inlined)"
		}
		out = append(out, s)
	}
	return out
}

// TestSplitDWARF: a -gsplit-dwarf build (skeleton units in the binary, the
// DIEs in layers.dwo beside it) symbolizes as gdb shows it — inlined frame,
// file and lines — and as the plain build does.
func TestSplitDWARF(t *testing.T) {
	checkLookupLibs(t)
	bin := lookupFile("bin", "split", "layers")
	core := lookupCore(t, "split")
	want := gdbBT(t, bin, core)
	got, err := analysis.Open(core, analysis.Options{Exe: bin, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	compareFrames(t, want.Threads[0], got.Threads[0])
	names := frameNames(got.Threads[0])
	if len(names) < 5 || !strings.HasPrefix(names[0], "first_limit layers.c:14 (inlined)") {
		t.Errorf("frames %q: want the inlined first_limit at layers.c:14 on top", names)
	}
	plain := plainFrames(t)
	if strings.Join(names, "\n") != strings.Join(plain, "\n") {
		t.Errorf("split DWARF frames\n  %s\ndiffer from the plain build's\n  %s", strings.Join(names, "\n  "), strings.Join(plain, "\n  "))
	}

	// Without the .dwo: the skeleton still gives lines, and a problem-free
	// fallback to the symbol table, never a failure.
	dir := t.TempDir()
	data, _ := os.ReadFile(bin)
	os.WriteFile(filepath.Join(dir, "layers"), data, 0o755)
	got2, err := analysis.Open(core, analysis.Options{Exe: filepath.Join(dir, "layers"), Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if f := got2.Threads[0].Frames; len(f) == 0 || f[0].Function != "check_config" {
		t.Errorf("without the .dwo: frames %q, want check_config from the symbol table", frameNames(got2.Threads[0]))
	}
}

// plainFrames symbolizes the stripped build's core with the plain build's
// DWARF (both have the same build-id): the reference frames, checked
// against gdb with the same debug file.
func plainFrames(t *testing.T) []string {
	t.Helper()
	core := lookupCore(t, "stripped")
	plain := lookupFile("bin", "plain", "layers")
	want := gdbBT(t, plain, core)
	got, err := analysis.Open(core, analysis.Options{Exe: plain, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	compareFrames(t, want.Threads[0], got.Threads[0])
	return frameNames(got.Threads[0])
}

// TestMiniDebugInfo: a binary stripped to .dynsym plus Fedora-style
// MiniDebugInfo (.gnu_debugdata: xz-compressed symbol table) names its
// static and global functions as gdb does with the same binary, and as the
// plain build's physical (non-inlined) frames are named.
func TestMiniDebugInfo(t *testing.T) {
	checkLookupLibs(t)
	bin := lookupFile("bin", "mini", "layers")
	core := lookupCore(t, "mini")
	want := gdbBT(t, bin, core)
	got, err := analysis.Open(core, analysis.Options{Exe: bin, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	compareFrames(t, want.Threads[0], got.Threads[0])
	var names, plain []string
	for _, f := range got.Threads[0].Frames {
		names = append(names, f.Function)
	}
	for _, n := range plainFrames(t) {
		if !strings.HasSuffix(n, "(inlined)") {
			plain = append(plain, strings.Fields(n)[0])
		}
	}
	if strings.Join(names, " ") != strings.Join(plain, " ") {
		t.Errorf("MiniDebugInfo frames %q, plain build's physical frames %q", names, plain)
	}
	for _, m := range got.Modules {
		if m.Path == got.Dump.Executable && m.Symbols != "symtab" {
			t.Errorf("executable symbols %q, want symtab (from .gnu_debugdata)", m.Symbols)
		}
	}
}
