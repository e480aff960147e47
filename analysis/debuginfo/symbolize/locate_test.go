package symbolize

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// splitDebug builds prog, then splits its DWARF into a separate file the
// way distributions do (objcopy --only-keep-debug, --strip-debug,
// --add-gnu-debuglink).
func splitDebug(t *testing.T, dir string) (prog, debug string) {
	t.Helper()
	requireTools(t, "gcc", "objcopy")
	prog = compile(t, "gcc", dir, "prog", "-g", "-O2", "-Wl,--build-id", "assert.c")
	debug = prog + ".debug"
	for _, args := range [][]string{
		{"--only-keep-debug", prog, debug},
		{"--strip-debug", prog},
		{"--add-gnu-debuglink=" + debug, prog},
	} {
		cmd := exec.Command("objcopy", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("objcopy %v: %v\n%s", args, err, out)
		}
	}
	return prog, debug
}

func TestFindDebugByDebugLink(t *testing.T) {
	dir := t.TempDir()
	prog, debug := splitDebug(t, dir)
	obj, err := object.OpenObject(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if _, _, ok := obj.Section(".debug_info"); ok {
		t.Fatal("stripped binary still has .debug_info")
	}
	name, _, ok := obj.DebugLink()
	if !ok || name != filepath.Base(debug) {
		t.Fatalf("DebugLink = %q, %v", name, ok)
	}
	l := &debugfile.Locator{}
	got, problems := l.FindDebug(prog, obj)
	if got != debug {
		t.Fatalf("FindDebug = %q %v, want %q", got, problems, debug)
	}
	// In dir/.debug/ too.
	if err := os.Mkdir(filepath.Join(dir, ".debug"), 0o755); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(dir, ".debug", filepath.Base(debug))
	if err := os.Rename(debug, moved); err != nil {
		t.Fatal(err)
	}
	if got, problems = l.FindDebug(prog, obj); got != moved {
		t.Fatalf("FindDebug = %q %v, want %q", got, problems, moved)
	}
	// A debug file whose CRC does not match is reported, not used.
	if err := os.WriteFile(moved, []byte("not the debug file"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, problems = l.FindDebug(prog, obj)
	if got != "" || len(problems) != 1 || !strings.Contains(problems[0], "CRC32") {
		t.Fatalf("FindDebug with bad CRC = %q %v", got, problems)
	}
}

func TestFindDebugByBuildID(t *testing.T) {
	dir := t.TempDir()
	prog, debug := splitDebug(t, dir)
	obj, err := object.OpenObject(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	id := obj.BuildID()
	if len(id) != 20 {
		t.Fatalf("BuildID = %x", id)
	}
	h := hex.EncodeToString(id)
	dbgDir := filepath.Join(dir, "dbg")
	p := filepath.Join(dbgDir, ".build-id", h[:2], h[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(debug, p); err != nil {
		t.Fatal(err)
	}
	l := &debugfile.Locator{DebugDirs: []string{dbgDir}}
	got, problems := l.FindDebug(prog, obj)
	if got != p {
		t.Fatalf("FindDebug = %q %v, want %q", got, problems, p)
	}
	// The split file symbolizes like the unsplit one.
	syms, done := openSymbols(t, prog, l)
	defer done()
	addr, ok := syms.SymbolAddr("compute")
	if !ok {
		t.Fatal("no compute symbol")
	}
	locs := syms.Lookup(addr)
	if len(locs) == 0 || locs[len(locs)-1].Function != "compute" || locs[0].File != "assert.c" || !locs[0].FromDWARF {
		t.Fatalf("Lookup(compute) = %s", formatLocs(locs))
	}
}

func TestFindBinaryBuildIDMismatch(t *testing.T) {
	dir := t.TempDir()
	prog, _ := splitDebug(t, dir)
	obj, err := object.OpenObject(prog)
	if err != nil {
		t.Fatal(err)
	}
	id := obj.BuildID()
	obj.Close()
	l := &debugfile.Locator{SearchDirs: []string{dir}}
	if got, problems := l.FindBinary("/nonexistent/dir/prog", id); got != prog {
		t.Fatalf("FindBinary by search dir = %q %v", got, problems)
	}
	wrong := append([]byte(nil), id...)
	wrong[0] ^= 0xff
	got, problems := l.FindBinary(prog, wrong)
	if got != "" || len(problems) == 0 || !strings.Contains(problems[0], hex.EncodeToString(id)) ||
		!strings.Contains(problems[0], hex.EncodeToString(wrong)) {
		t.Fatalf("FindBinary with wrong id = %q %v", got, problems)
	}
	sysroot := filepath.Join(dir, "sysroot")
	inRoot := filepath.Join(sysroot, "usr/bin/prog")
	if err := os.MkdirAll(filepath.Dir(inRoot), 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(prog)
	if err := os.WriteFile(inRoot, data, 0o755); err != nil {
		t.Fatal(err)
	}
	l = &debugfile.Locator{Sysroot: sysroot}
	if got, problems := l.FindBinary("/usr/bin/prog", id); got != inRoot {
		t.Fatalf("FindBinary in sysroot = %q %v", got, problems)
	}
}

func TestObjectReadAt(t *testing.T) {
	requireTools(t, "gcc", "objdump")
	dir := t.TempDir()
	prog := compile(t, "gcc", dir, "prog", "-g", "-O2", "assert.c")
	obj, err := object.OpenObject(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	text, addr, ok := obj.Section(".text")
	if !ok || len(text) < 16 {
		t.Fatal("no .text")
	}
	buf := make([]byte, 16)
	if n, err := obj.ReadAt(buf, addr); n != 16 || err != nil || string(buf) != string(text[:16]) {
		t.Fatalf("ReadAt(.text) = %d, %v", n, err)
	}
	if _, err := obj.ReadAt(buf, 1<<60); err == nil {
		t.Fatal("ReadAt outside the segments succeeded")
	}
}
