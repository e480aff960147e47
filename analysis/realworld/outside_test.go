package realworld_test

import (
	"compress/bzip2"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// unpack decompresses testdata/name (.bz2 or .gz) into dir.
func unpack(t *testing.T, dir, name string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader
	out := filepath.Join(dir, filepath.Base(name))
	switch {
	case strings.HasSuffix(name, ".bz2"):
		r, out = bzip2.NewReader(f), strings.TrimSuffix(out, ".bz2")
	case strings.HasSuffix(name, ".gz"):
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r, out = zr, strings.TrimSuffix(out, ".gz")
	}
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, io.LimitReader(r, 64<<20)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	os.Chmod(out, 0o755)
	return out
}

// crashingLines is the crashing thread's frames as "function" or
// "function at file:line".
func crashingLines(c *model.Crash) []string {
	for _, th := range c.Threads {
		if th.ID == c.CrashingThreadID {
			return crashlab.ModelLines(th)
		}
	}
	return nil
}

// TestElfutilsCores: elfutils' backtrace test cores (testdata/elfutils)
// give the frames elfutils' tests expect — raise, sigusr2, stdarg,
// backtracegen in the thread that aborted (on i386 under the vDSO's
// __kernel_vsyscall), main in the other — and equal gdb's; on x86_64.fp
// gdb stops at a bogus pc 0 after stdarg while the frame-pointer chain
// (and elfutils) goes on. Other architectures are refused with a clear
// error.
func TestElfutilsCores(t *testing.T) {
	for _, tc := range []struct {
		arch, gdb string
		gdbWrong  bool
	}{
		{"x86_64", "gdb", false}, {"x86_64.fp", "gdb", true}, {"aarch64", "gdb-multiarch", false}, {"aarch64.fp", "gdb-multiarch", false},
		{"i386", "gdb", false}, {"i386.fp", "gdb", false},
	} {
		t.Run(tc.arch, func(t *testing.T) {
			dir := t.TempDir()
			exe := unpack(t, dir, "elfutils/backtrace."+tc.arch+".exec.bz2")
			core := unpack(t, dir, "elfutils/backtrace."+tc.arch+".core.bz2")
			c, err := analysis.Open(core, analysis.Options{Exe: exe, Offline: true})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"raise", "sigusr2", "stdarg", "backtracegen", "start", "start_thread", "clone"}
			if strings.HasPrefix(tc.arch, "i386") {
				// The system call is made in the vDSO, as gdb shows too.
				want = append([]string{"__kernel_vsyscall"}, want...)
			}
			var got []string
			for _, l := range crashingLines(c) {
				got = append(got, strings.Fields(l)[0])
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("crashing thread %q, elfutils expects %q", got, want)
			}
			mainSeen := false
			for _, th := range c.Threads {
				for _, f := range th.Frames {
					mainSeen = mainSeen || f.Function == "main"
					if f.Function == "gsignal" {
						t.Errorf("gsignal in thread %d (elfutils' check_gsignal)", th.ID)
					}
				}
			}
			if !mainSeen || len(c.Threads) != 2 {
				t.Errorf("%d threads, main seen %v", len(c.Threads), mainSeen)
			}
			g := crashlab.GDBProgram(t, tc.gdb, exe, core)
			d := crashlab.CompareWithGDB(g, c)
			switch {
			case !tc.gdbWrong && d != "":
				t.Errorf("frames differ from gdb:\n%s", d)
			case tc.gdbWrong:
				lines := crashlab.GDBLines(g.Threads[0])
				if len(lines) != 4 || lines[3] != "??" || crashlab.Diff(lines[:3], crashingLines(c)[:3]) != "" {
					t.Errorf("gdb's frames %q: expected it to agree for 3 frames and stop at pc 0", lines)
				}
			}
		})
	}
	for _, arch := range []string{"ppc", "ppc64le.fp", "s390", "s390x", "sparc", "x32"} {
		t.Run(arch, func(t *testing.T) {
			core := unpack(t, t.TempDir(), "elfutils/backtrace."+arch+".core.bz2")
			checkUnsupported(t, core, map[string]string{"ppc": "32-bit PowerPC",
				"ppc64le.fp": "PowerPC64", "s390": "32-bit s390", "s390x": "s390x", "sparc": "SPARC64", "x32": "x32"}[arch])
		})
	}
}

// checkUnsupported: opening the core fails with an error naming its
// architecture and what faultline reads.
func checkUnsupported(t *testing.T, core, arch string) {
	t.Helper()
	c, err := analysis.Open(core, analysis.Options{Offline: true})
	if err == nil {
		t.Fatalf("opened a core faultline cannot read: %d threads", len(c.Threads))
	}
	if msg := err.Error(); !strings.Contains(msg, arch) || !strings.Contains(msg, "faultline reads x86-64, aarch64 and i386 cores only") {
		t.Errorf("error %q does not name the architecture %q and what is supported", msg, arch)
	}
}

// TestLLDBCores: LLDB's elf-core test cores (testdata/lldb) give what
// TestLinuxCore.py, TestLinuxCoreThreads.py and TestGCore.py expect.
func TestLLDBCores(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		pid    int
		frames []string
	}{
		{"linux-x86_64", 32259, []string{"bar at main.c:4", "foo at main.c:10", "_start at main.c:16"}},
		{"altmain", 32259, []string{"_start at altmain.c:5"}},
		{"linux-i386", 32306, []string{"bar at main.c:4", "foo at main.c:10", "_start at main.c:16"}},
	} {
		exe := unpack(t, dir, "lldb/"+tc.name+".out.gz")
		core := unpack(t, dir, "lldb/"+tc.name+".core.gz")
		c, err := analysis.Open(core, analysis.Options{Exe: exe, Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		if c.Dump.PID != tc.pid || strings.Join(crashingLines(c), "|") != strings.Join(tc.frames, "|") {
			t.Errorf("%s: pid %d, frames %q; LLDB expects %d, %q", tc.name, c.Dump.PID, crashingLines(c), tc.pid, tc.frames)
		}
		if d := crashlab.CompareWithGDB(crashlab.GDB(t, exe, core), c); d != "" {
			t.Errorf("%s: frames differ from gdb:\n%s", tc.name, d)
		}
	}

	for arch, want := range map[string][3]int{"x86_64": {5222, 5250}, "i386": {5193, 5195}} {
		checkLLDBThreadCrash(t, unpack(t, dir, "lldb/thread_crash-linux-"+arch+".core.gz"), want[0], want[1])
	}
	for arch, pid := range map[string]int{"x86_64": 5669, "i386": 5586} {
		c, err := analysis.Open(unpack(t, dir, "lldb/gcore-linux-"+arch+".core.gz"), analysis.Options{Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		if c.Dump.PID != pid || len(c.Threads) != 3 || c.Signal == nil || c.Signal.Number != 19 || c.Classification.Kind != model.KindHang {
			t.Errorf("gcore %s: pid %d, %d threads, signal %+v, kind %s; LLDB expects %d, 3, SIGSTOP (and no crash)",
				arch, c.Dump.PID, len(c.Threads), c.Signal, c.Classification.Kind, pid)
		}
	}

	for name, arch := range map[string]string{"linux-s390x": "s390x", "linux-ppc64le": "PowerPC64", "linux-mips64el-gnuabi64": "64-bit MIPS"} {
		checkUnsupported(t, unpack(t, dir, "lldb/"+name+".core.gz"), arch)
	}
}

// checkLLDBThreadCrash: TestLinuxCoreThreads.py's expectations of a core
// of 3 threads, thread tid stopped by a SIGILL it raised, the others by
// no signal.
func checkLLDBThreadCrash(t *testing.T, core string, pid, tid int) {
	t.Helper()
	c, err := analysis.Open(core, analysis.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Dump.PID != pid || len(c.Threads) != 3 || c.CrashingThreadID != tid || c.Signal == nil || c.Signal.Number != 4 {
		t.Errorf("thread_crash %s: pid %d, %d threads, crashing %d, signal %+v; LLDB expects %d, 3, %d, SIGILL",
			c.Dump.Arch, c.Dump.PID, len(c.Threads), c.CrashingThreadID, c.Signal, pid, tid)
	}
	if c.Classification.Kind != model.KindKilled {
		t.Errorf("thread_crash %s: raise(SIGILL) classified %s, want %s (no instruction faulted)", c.Dump.Arch, c.Classification.Kind, model.KindKilled)
	}
}
