package unwind

// Helpers that build the crash programs, run them to real core dumps and ask
// gdb for its backtrace of the same core, physical frame by physical frame.

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"gcc", "gdb"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// buildCrash compiles testdata/crash.c with flags into dir and returns the
// executable's path.
func buildCrash(t *testing.T, dir string, flags ...string) string {
	t.Helper()
	src, err := filepath.Abs("testdata/crash.c")
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "crash")
	args := append([]string{"-g", "-pthread", "-o", exe, src}, flags...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
	return exe
}

// makeCore runs exe mode in a fresh directory with core dumps enabled and
// returns the core's path.
func makeCore(t *testing.T, exe, mode string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(exe), "core-"+mode)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `ulimit -c unlimited; exec "$0" "$1"`, exe, mode)
	cmd.Dir = dir
	_ = cmd.Run() // it is meant to crash
	cores, _ := filepath.Glob(filepath.Join(dir, "core*"))
	if len(cores) == 0 {
		out, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
		t.Skipf("no core dump written (core_pattern %q)", strings.TrimSpace(string(out)))
	}
	return cores[0]
}

// gdbThread is gdb's view of one thread: the pcs of its physical frames.
type gdbThread struct {
	lwp      int
	pcs      []uint64
	sigtramp []bool
	regs     []map[string]uint64 // per frame: the registers gdb could recover
	err      string              // gdb's "Backtrace stopped" reason, if any
}

// gdb frame types (gdb/python/py-frame.c): inline and tail-call frames are
// virtual levels of one physical frame.
const (
	gdbInlineFrame   = 2
	gdbTailcallFrame = 3
	gdbSigtrampFrame = 4
)

const gdbScript = `
import gdb
gdb.execute("set pagination off")
gdb.execute("set backtrace past-main on")
for th in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
    th.switch()
    print("T %d" % th.ptid[1])
    f = gdb.newest_frame()
    n = 0
    while f is not None:
        regs = []
        n += 1
        if f.type() not in (2, 3) and n < 100:
            for r in ("rsp", "rbp", "rbx", "r12", "r13", "r14", "r15"):
                try:
                    v = f.read_register(r)
                    if not v.is_optimized_out:
                        regs.append("%s=0x%x" % (r, int(v) & 0xffffffffffffffff))
                except Exception:
                    pass
        print("F 0x%x %d %s" % (f.pc(), f.type(), " ".join(regs)))
        try:
            f = f.older()
        except gdb.error as e:
            print("E %s" % e)
            break
`

// gdbBacktrace runs gdb on exe and core and returns its threads. The script
// sets "backtrace past-main on": the unwinder goes on to _start and clone3,
// and cutting at main the way gdb's bt does is the symbolizer's job.
func gdbBacktrace(t *testing.T, exe, core string) map[int]*gdbThread {
	t.Helper()
	script := filepath.Join(t.TempDir(), "frames.py")
	if err := os.WriteFile(script, []byte(gdbScript), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("gdb", "-nx", "-batch", "-x", script, exe, core).Output()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	threads := map[int]*gdbThread{}
	var cur *gdbThread
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "T":
			lwp, _ := strconv.Atoi(f[1])
			cur = &gdbThread{lwp: lwp}
			threads[lwp] = cur
		case len(f) >= 3 && f[0] == "F" && cur != nil:
			pc, _ := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
			typ, _ := strconv.Atoi(f[2])
			if typ == gdbInlineFrame || typ == gdbTailcallFrame {
				continue
			}
			cur.pcs = append(cur.pcs, pc)
			cur.sigtramp = append(cur.sigtramp, typ == gdbSigtrampFrame)
			regs := map[string]uint64{}
			for _, kv := range f[3:] {
				name, val, _ := strings.Cut(kv, "=")
				v, err := strconv.ParseUint(strings.TrimPrefix(val, "0x"), 16, 64)
				if err == nil {
					regs[name] = v
				}
			}
			cur.regs = append(cur.regs, regs)
		case len(f) > 0 && f[0] == "E" && cur != nil:
			cur.err = strings.TrimPrefix(sc.Text(), "E ")
		}
	}
	if len(threads) == 0 {
		t.Fatalf("gdb printed no threads:\n%s", out)
	}
	return threads
}
