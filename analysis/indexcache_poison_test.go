package analysis_test

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// TestIndexCachePoisoning (issue 24 item 7): a file that carries a
// program's build-id and a compressed .debug_str of the same size, but
// other content (the crashing function renamed), is analyzed first with
// the index cache on; the genuine program's report afterwards must be the
// one it gives with no cache. Decompressed sections were cached under
// build-id + section + compressed size, so the poison was served to the
// genuine file until eviction.
func TestIndexCachePoisoning(t *testing.T) {
	dir := t.TempDir()
	exe, core := buildBigDebugCrash(t, dir)
	genuine := filepath.Join(dir, "crash.z")
	if out, err := exec.Command("objcopy", "--compress-debug-sections=zlib", exe, genuine).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	poison := filepath.Join(dir, "poison")
	writePoisoned(t, genuine, poison, "crash_here_", "pwned_here_")
	cache := filepath.Join(dir, "index")
	analyze := func(exe, cache string) string {
		t.Helper()
		r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", "--offline", "--index-cache", cache, "--exe", exe, core},
			Env: []string{"XDG_CACHE_HOME=" + t.TempDir()}, Limits: boundtest.Limits{Wall: 60 * time.Second}})
		if r.Exit != 0 || r.Killed != "" {
			t.Fatalf("%v\n%s", r, r.Stderr)
		}
		return strings.ReplaceAll(r.Stdout, exe, "EXE")
	}
	want := analyze(genuine, "off")
	if !strings.Contains(want, `"crash_here_`) {
		t.Fatalf("the genuine report does not name crash_here_…:\n%.3000s", want)
	}
	if p := analyze(poison, cache); !strings.Contains(p, `"pwned_here_`) {
		t.Fatalf("the poisoning file's own report does not show its renamed function (the test's poison is not read):\n%.3000s", p)
	}
	if entries, _ := filepath.Glob(filepath.Join(cache, "*debug_str*.idx")); len(entries) == 0 {
		t.Fatalf("the poisoning run stored no .debug_str entry")
	}
	if got := analyze(genuine, cache); got != want {
		t.Errorf("after the poisoning file, the genuine program's report changed (pwned_here_ in it: %v)", strings.Contains(got, "pwned_here_"))
	}
}

// buildBigDebugCrash compiles a program whose .debug_str is well over the
// cache's 64 KiB threshold (2,000 functions with long names) and crashes it
// in crash_here_….
func buildBigDebugCrash(t *testing.T, dir string) (exe, core string) {
	t.Helper()
	var src strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&src, "int function_with_a_rather_long_name_to_fill_debug_str_%04d(int x) { return x + %d; }\n", i, i)
	}
	src.WriteString("int __attribute__((noinline)) crash_here_(int *p) { return *p; }\nint main(void) { return crash_here_(0); }\n")
	if err := os.WriteFile(filepath.Join(dir, "crash.c"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cc := exec.Command("gcc", "-g", "-O0", "-o", "crash", "crash.c")
	cc.Dir = dir
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	exe = filepath.Join(dir, "crash")
	run := exec.Command("sh", "-c", "ulimit -c unlimited; exec ./crash")
	run.Dir = dir
	_ = run.Run()
	for _, name := range []string{"core", "core." + strconv.Itoa(run.ProcessState.Pid())} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Mode().IsRegular() {
			return exe, filepath.Join(dir, name)
		}
	}
	core = filepath.Join(dir, "core.gdb")
	if out, err := exec.Command("gdb", "-batch", "-nx", "-ex", "run", "-ex", "generate-core-file "+core, exe).CombinedOutput(); err != nil {
		t.Fatalf("no core: %v\n%s", err, out)
	}
	return exe, core
}

// writePoisoned copies src to dst with its SHF_COMPRESSED .debug_str
// replaced, in place and at the same size: the same ch_size, from with
// to in the decompressed bytes, recompressed and padded with zeros.
func writePoisoned(t *testing.T, src, dst, from, to string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".debug_str")
	if s == nil || s.Flags&elf.SHF_COMPRESSED == 0 {
		t.Fatal(".debug_str is not compressed")
	}
	raw := b[s.Offset : s.Offset+s.FileSize]
	zr, err := zlib.NewReader(bytes.NewReader(raw[24:]))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || uint64(len(plain)) != binary.LittleEndian.Uint64(raw[8:]) || len(plain) < 64<<10 {
		t.Fatalf("debug_str: %d bytes (%v)", len(plain), err)
	}
	plain = bytes.ReplaceAll(plain, []byte(from), []byte(to))
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write(plain)
	zw.Close()
	if 24+z.Len() > len(raw) {
		t.Fatalf("the poisoned .debug_str compresses to %d bytes, over the original %d", 24+z.Len(), len(raw))
	}
	copy(raw[24:], z.Bytes())
	clear(raw[24+z.Len():])
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
