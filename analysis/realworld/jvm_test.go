package realworld_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/analysis/model"
)

// jvmOptions keep the JVM's core small (about 200 MiB: the heap, the code
// cache and the class-data archive) and make it write one on a crash.
var jvmOptions = []string{"-Xmx32m", "-Xms32m", "-XX:+UseSerialGC", "-XX:ReservedCodeCacheSize=16m", "-XX:+CreateCoredumpOnCrash",
	"-XX:CompileCommand=quiet", "-XX:CompileCommand=exclude,Hot::storeFromVM", "-XX:CompileCommand=dontinline,Hot::storeFromVM"}

// TestDebianJVM runs Debian's OpenJDK on testdata/programs/Hot.java, whose
// hot loop the JIT compiles, and ends it three ways. The JVM installs its
// own SIGSEGV handler, which writes hs_err_pid<PID>.log and abort()s: the
// core says SIGABRT, and the report reads the fault the handler caught from
// the kernel's signal frame.
//   - unsafe: a NULL store in the VM's Unsafe_PutLong → null-deref there.
//   - jit: a NULL store in JIT-compiled code (Unsafe.putLong is an
//     intrinsic) → null-deref in code no file maps, the culprit that `??`
//     frame, not a stale return address found by stack scanning past it.
//   - killed: `kill -SEGV` while it spins → killed, by the kill's pid (the
//     handler's siginfo), not a fault.
//
// Each is opened within a time limit, and every thread's frames equal
// gdb's up to the first JIT frame (past it gdb's frames are heuristics).
func TestDebianJVM(t *testing.T) {
	java, javac := debianProgram(t, "java"), debianProgram(t, "javac")
	classes := mustTempDir(t)
	if out, err := exec.Command(javac, "-nowarn", "-d", classes, filepath.Join(programs, "Hot.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	run := func(t *testing.T, what string) (*crashlab.Started, []string) {
		argv := append(append([]string{java}, jvmOptions...), "-cp", classes, "Hot", what)
		return crashlab.Start(t, t.TempDir(), "warm", argv...), argv
	}
	open := func(t *testing.T, s *crashlab.Started) (*model.Crash, string) {
		core := s.WaitCore(t)
		return openWithin(t, core, analysis.Options{Exe: java, Offline: true}, 2*time.Minute), core
	}
	t.Run("unsafe", func(t *testing.T) {
		s, _ := run(t, "unsafe")
		c, core := open(t, s)
		checkJVMFault(t, c, "Unsafe_PutLong")
		compareUpToJIT(t, crashlab.GDB(t, java, core), c)
	})
	t.Run("jit", func(t *testing.T) {
		s, _ := run(t, "jit")
		c, core := open(t, s)
		checkJVMFault(t, c, "")
		cls := c.Classification
		if !strings.Contains(cls.Summary, "JIT-compiled") || strings.Contains(cls.Signature, "0x") {
			t.Errorf("summary %q, signature %q: want the JIT code named as such and no address", cls.Summary, cls.Signature)
		}
		compareUpToJIT(t, crashlab.GDB(t, java, core), c)
	})
	t.Run("killed", func(t *testing.T) {
		s, _ := run(t, "spin")
		time.Sleep(500 * time.Millisecond) // into the JIT-compiled loop
		sender := exec.Command("kill", "-SEGV", itoa(s.Pid()))
		if out, err := sender.CombinedOutput(); err != nil {
			t.Fatalf("kill: %v %s", err, out)
		}
		c, core := open(t, s)
		cls := c.Classification
		ev := strings.Join(cls.Evidence, "\n")
		if cls.Kind != model.KindKilled || !cls.Reraised || !strings.Contains(ev, "SIGSEGV (SI_USER) was sent by pid "+itoa(sender.Process.Pid)) {
			t.Errorf("kind %s, reraised %v; want killed by pid %d through the JVM's handler:\n%s", cls.Kind, cls.Reraised, sender.Process.Pid, ev)
		}
		compareUpToJIT(t, crashlab.GDB(t, java, core), c)
	})
}

// checkJVMFault: a NULL store the JVM's handler caught and turned into
// abort(); culprit names the culprit frame's function ("" for JIT code:
// a `??` frame in no module).
func checkJVMFault(t *testing.T, c *model.Crash, culprit string) {
	t.Helper()
	cls := c.Classification
	ev := strings.Join(cls.Evidence, "\n")
	if c.Signal.Name != "SIGABRT" || cls.Kind != model.KindNullDeref || !cls.Reraised {
		t.Errorf("signal %s, kind %s, reraised %v; want SIGABRT, null-deref, re-raised:\n%s", c.Signal.Name, cls.Kind, cls.Reraised, ev)
	}
	for _, want := range []string{"caught SIGSEGV (SEGV_MAPERR) and then raised SIGABRT", "JVM_handle_linux_signal", "hs_err_pid"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}
	th := c.CrashingThread()
	if cls.CulpritFrame < 0 || th == nil {
		t.Fatalf("no culprit frame")
	}
	f, prev := th.Frames[cls.CulpritFrame], th.Frames[cls.CulpritFrame-1]
	if f.Function != culprit || (culprit == "" && f.Module != "") || !(prev.Signal || prev.Function == model.SignalFrameName) {
		t.Errorf("culprit #%d %q in %q; want %q right past the signal frame:\n%s", cls.CulpritFrame, f.Function, f.Module, culprit,
			strings.Join(crashlab.ModelLines(*th), "\n"))
	}
}

// compareUpToJIT compares each thread's frames with gdb's up to and with
// the first frame in code no file maps (JIT code): gdb walks on from there
// by guesses (frame pointers that V8 and HotSpot do not keep).
func compareUpToJIT(t *testing.T, gdb *logs.GDBLog, c *model.Crash) {
	t.Helper()
	jit := 0
	n := compareThreads(t, gdb, c, func(want []string, th model.Thread) ([]string, []string) {
		n := len(th.Frames)
		for i, f := range th.Frames {
			if f.Function == "" && f.Module == "" && !f.Signal {
				n, jit = i+1, jit+1
				break
			}
		}
		return want[:min(n, len(want))], crashlab.ModelLines(th)[:n]
	})
	t.Logf("%d threads, %d frames equal to gdb's, %d threads stop at a JIT frame", len(gdb.Threads), n, jit)
}
