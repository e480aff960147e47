package realworld_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestI386Cores: a 32-bit program (gcc -m32, Debian's gcc-multilib and
// libc6-i386) crashed five ways into i386 cores (testdata/programs/
// i386.c: a NULL read, abort, threads, a fault in a plain handler and in a
// SA_SIGINFO one, across both of glibc's sigreturn trampolines): every
// thread's frames equal gdb's, and the crash is classified as on x86-64.
// Before, faultline refused i386 cores ("unsupported ELF class").
//
// The cores are written by qemu-i386 (qemu-user), as testdata/aarch64's
// are by qemu-aarch64: Linux kernels built without IA32 emulation (this
// one among them) cannot run a 32-bit program at all. qemu writes the
// core a kernel would, less NT_FILE and NT_SIGINFO: the libraries are
// found through the 32-bit link_map. The kernel's own i386 cores (with
// those notes) are elfutils' and LLDB's (TestElfutilsCores,
// TestLLDBCores).
func TestI386Cores(t *testing.T) {
	for _, tool := range []string{"gcc", "qemu-i386", "gdb"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required (.ci/install.d/rust-i386.sh, testdata/debuginfo/install.sh): %v", tool, err)
		}
	}
	bin := cachedBuild(t, "i386", []string{"i386.c"}, "gcc", "-m32", "-g", "-O1", "-pthread", "-o", "$OUT", "i386.c")
	for _, tc := range []struct {
		mode, kind, culprit string
		threads             int
		frames              []string // the crashing thread's functions that must be there
	}{
		{"null", model.KindNullDeref, "sum_list", 1, []string{"sum_list", "main"}},
		{"abort", model.KindAbort, "check_range", 1, []string{"raise", "abort", "check_range", "main"}},
		{"threads", model.KindNullDeref, "sum_list", 4, []string{"sum_list", "main"}},
		{"handler", model.KindNullDeref, "on_signal", 1, []string{"on_signal", model.SignalFrameName, "raise", "main"}},
		{"siginfo", model.KindNullDeref, "on_siginfo", 1, []string{"on_siginfo", model.SignalFrameName, "raise", "main"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			core := crashI386(t, bin, tc.mode)
			c, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			if c.Dump.Arch != "i386" || len(c.Threads) != tc.threads {
				t.Fatalf("arch %q, %d threads; want i386, %d", c.Dump.Arch, len(c.Threads), tc.threads)
			}
			if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
				t.Errorf("frames differ from gdb:\n%s", d)
			}
			var fns []string
			for _, f := range crashingThread(t, c).Frames {
				fns = append(fns, f.Function)
			}
			if got := strings.Join(fns, " "); !containsInOrder(fns, tc.frames) {
				t.Errorf("crashing thread %s; want %v in order", got, tc.frames)
			}
			if cls := c.Classification; cls.Kind != tc.kind || culprit(c) != tc.culprit {
				t.Errorf("kind %s, culprit %q; want %s in %s", cls.Kind, culprit(c), tc.kind, tc.culprit)
			}
		})
	}
}

// crashI386 runs the 32-bit bin with mode under qemu-i386 in a new
// directory and returns the guest core qemu wrote. The core size limit
// lets qemu write the guest's core (11 MB, 36 MB with the threads) and cuts the host core
// of qemu itself, which the kernel then writes as "core", short; it is
// removed.
func crashI386(t *testing.T, bin, mode string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("bash", "-c", `ulimit -c 49152; exec qemu-i386 "$@"`, "qemu", bin, mode)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("%s %s exited 0; it should have crashed\n%s", bin, mode, out)
	}
	os.Remove(filepath.Join(dir, "core"))
	cores, _ := filepath.Glob(filepath.Join(dir, "qemu_*.core"))
	if len(cores) != 1 {
		t.Fatalf("qemu-i386 left %d guest cores", len(cores))
	}
	return cores[0]
}

// containsInOrder reports whether want's items appear in list in order.
func containsInOrder(list, want []string) bool {
	i := 0
	for _, s := range list {
		if i < len(want) && s == want[i] {
			i++
		}
	}
	return i == len(want)
}
