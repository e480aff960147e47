package realworld_test

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// mpiEnv lets mpirun run as root (CI containers) and keeps it on this node.
var mpiEnv = []string{"env", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1"}

// TestReraisingRuntimes: the crash handlers of libgfortran, Open MPI and R
// print their backtrace, raise the signal again and return, so the core
// records SIGSEGV sent by the process itself (SI_TKILL) at the faulting
// instruction, with no handler frame. faultline reads the fault the
// handler caught (from its signal frame below %rsp, or from the
// instruction at the pc when R's handler ran on its alternate stack) and
// blames the program's frame; the frames equal gdb's (Fortran's named from
// the DIE tree, grid::fill_row, and ending at MAIN__ as gdb's do).
func TestReraisingRuntimes(t *testing.T) {
	t.Run("gfortran", func(t *testing.T) {
		t.Parallel()
		bin := cachedBuild(t, "grid", []string{"grid.f90"}, "gfortran", "-O1", "-g", "-o", "$OUT", "grid.f90")
		core, out := crashlab.Crash(t, t.TempDir(), "", bin)
		checkReraisedRuntime(t, core, bin, bin, "grid::fill_row", "Backtrace for this error", out)
	})
	t.Run("openmpi", func(t *testing.T) {
		t.Parallel()
		bin := cachedBuild(t, "mpirank", []string{"mpirank.c"}, "mpicc", "-O1", "-g", "-o", "$OUT", "mpirank.c")
		core, out := crashlab.Crash(t, t.TempDir(), "", append(mpiEnv, "mpirun", "-np", "1", bin, "segv")...)
		checkReraisedRuntime(t, core, bin, bin, "exchange", "Failing at address", out)
	})
	t.Run("R", func(t *testing.T) {
		t.Parallel()
		lib := cachedBuild(t, "rext.so", []string{"rext.c"}, "gcc", "-O1", "-g", "-shared", "-fPIC", "-I/usr/share/R/include", "-o", "$OUT", "rext.c")
		script := fmt.Sprintf("dyn.load(%q); print(.Call(\"fit_model\", 4L))", lib)
		core, out := crashlab.Crash(t, t.TempDir(), "", "Rscript", "-e", script)
		checkReraisedRuntime(t, core, "", "/usr/lib/R/bin/exec/R", "score", "caught segfault", out)
	})
}

// checkReraisedRuntime opens a runtime's core (with exe, or the core's
// own executable when exe is ""), asserts a re-raised null-deref blamed on
// culprit, and compares the frames with gdb's (on gdbExe) when gdbExe is
// set. banner is what the runtime's handler printed.
func checkReraisedRuntime(t *testing.T, core, exe, gdbExe, culpritFn, banner, out string) {
	t.Helper()
	if !strings.Contains(out, banner) {
		t.Errorf("the runtime's handler did not run (no %q in its output):\n%s", banner, out)
	}
	c, err := analysis.Open(core, analysis.Options{Exe: exe})
	if err != nil {
		t.Fatal(err)
	}
	if c.Signal == nil || c.Signal.Code != "SI_TKILL" {
		t.Fatalf("signal %+v: want SIGSEGV SI_TKILL (the handler's raise)", c.Signal)
	}
	checkKindCase(t, c, kindCase{kind: model.KindNullDeref, culprit: culpritFn, reraised: true,
		summary: []string{"NULL pointer dereference in " + culpritFn}})
	if gdbExe != "" {
		// Every frame, to the end of each stack: R's goes on past C's main
		// to _start, as gdb's does (R's executable defines a MAIN__ stub,
		// which Debian's gdb takes for the program's main).
		if d := crashlab.CompareWithGDB(crashlab.GDB(t, gdbExe, core), c); d != "" {
			t.Errorf("frames differ from gdb's:\n%s", d)
		}
	}
}

// TestOpenMPIKilledRank: `kill -ABRT` sent to a rank blocked in MPI_Recv.
// Open MPI's handler re-raises SIGABRT and returns: the core records
// SIGABRT sent by the rank itself with no abort() on the stack. It is
// "killed" by the pid that sent it (read from the handler's siginfo left
// below %rsp), never "called abort()".
func TestOpenMPIKilledRank(t *testing.T) {
	bin := cachedBuild(t, "mpirank", []string{"mpirank.c"}, "mpicc", "-O1", "-g", "-o", "$OUT", "mpirank.c")
	send := buildOnce(t, "sender", "gcc", []string{"sender.c"}, "-O1")
	dir := t.TempDir()
	s := crashlab.Start(t, dir, "ready", append(mpiEnv, "mpirun", "-np", "1", bin, "wait")...)
	var pid int
	if _, err := fmt.Sscanf(s.Out.String()[strings.Index(s.Out.String(), "ready"):], "ready %d", &pid); err != nil {
		t.Fatalf("no pid in %q: %v", s.Out.String(), err)
	}
	time.Sleep(200 * time.Millisecond) // into MPI_Recv's progress loop
	cmd := exec.Command(send, "kill", fmt.Sprint(pid), fmt.Sprint(int(syscall.SIGABRT)))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sender: %v\n%s", err, out)
	}
	core := s.WaitCore(t)
	c, err := analysis.Open(core, analysis.Options{Exe: bin})
	if err != nil {
		t.Fatal(err)
	}
	cls := c.Classification
	want := fmt.Sprintf("sent by pid %d", cmd.Process.Pid)
	if cls.Kind != model.KindKilled || !cls.Reraised || !strings.Contains(cls.Summary, want) || strings.Contains(cls.Summary, "abort()") {
		t.Errorf("kind %s, reraised %v, summary %q; want killed, re-raised, %q\n%s", cls.Kind, cls.Reraised, cls.Summary, want, strings.Join(cls.Evidence, "\n"))
	}
	if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
		t.Errorf("frames differ from gdb:\n%s", d)
	}
}
