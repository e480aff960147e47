package realworld_test

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// openWithin opens a core and fails if that takes longer than limit (a
// JIT stack must never make the unwinder hang).
func openWithin(t *testing.T, core string, opt analysis.Options, limit time.Duration) *model.Crash {
	t.Helper()
	type result struct {
		c   *model.Crash
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := analysis.Open(core, opt)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.c
	case <-time.After(limit):
		t.Fatalf("opening %s took longer than %v", core, limit)
	}
	return nil
}

// debianProgram is the path of a program Debian installed, or fails.
func debianProgram(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is required (the README's test command installs it): %v", name, err)
	}
	p, _ = filepath.EvalSymlinks(p)
	return p
}

// TestDebianNodeJIT: Debian's node, killed while it runs JavaScript: the
// frame in V8's JIT code (anonymous memory next to node's own mappings,
// and node maps part of its binary a second time) is a plain ?? with no
// module, the frames past it come from V8's frame pointers, and the
// signature holds no address that changes from run to run.
func TestDebianNodeJIT(t *testing.T) {
	node := debianProgram(t, "node")
	s := crashlab.Start(t, t.TempDir(), "ready", node, "-e", "console.log('ready'); let x = 0; for (;;) { x++ }")
	time.Sleep(300 * time.Millisecond) // into the JIT-compiled loop
	if err := s.Cmd.Process.Signal(syscall.SIGSEGV); err != nil {
		t.Fatal(err)
	}
	c := openWithin(t, s.WaitCore(t), analysis.Options{Exe: node, Offline: true}, 2*time.Minute)
	th := c.Threads[0]
	if !th.Crashed || len(th.Frames) < 3 {
		t.Fatalf("crashing thread %d: %d frames", th.ID, len(th.Frames))
	}
	if f := th.Frames[0]; f.Function != "" || f.Module != "" {
		t.Errorf("JIT frame #0 %+v: want ?? with no module", f)
	}
	names := strings.Join(crashlab.ModelLines(th), "\n")
	if !strings.Contains(names, "Builtins_JSEntry") {
		t.Errorf("no V8 entry frame past the JIT code:\n%s", names)
	}
	if sig := c.Classification.Signature; strings.Contains(sig, "0x") || !strings.HasPrefix(sig, "killed by SIGSEGV | ??") {
		t.Errorf("signature %q", sig)
	}
}

// TestDebianSqlite3Killed: Debian's sqlite3 waiting for input, killed with
// SIGSEGV by another process: kind killed, frames equal gdb's.
func TestDebianSqlite3Killed(t *testing.T) {
	sqlite := debianProgram(t, "sqlite3")
	s := crashlab.Start(t, t.TempDir(), "", sqlite, "-batch")
	s.WaitInSyscall(t, 0) // read(2)
	sender := exec.Command("kill", "-SEGV", itoa(s.Pid()))
	if out, err := sender.CombinedOutput(); err != nil {
		t.Fatalf("kill: %v %s", err, out)
	}
	core := s.WaitCore(t)
	c := openWithin(t, core, analysis.Options{Exe: sqlite, Offline: true}, time.Minute)
	if c.Classification.Kind != model.KindKilled || c.Signal.Sender != sender.Process.Pid {
		t.Errorf("kind %s, sender %d; want killed by %d", c.Classification.Kind, c.Signal.Sender, sender.Process.Pid)
	}
	if d := crashlab.CompareWithGDB(crashlab.GDB(t, sqlite, core), c); d != "" {
		t.Errorf("frames differ from gdb:\n%s", d)
	}
}

// TestDebianPython3 crashes Debian's python3 in ctypes with and without
// faulthandler: faulthandler's re-raise is seen through (the original
// fault is a NULL read, not a signal sent), and the frames equal gdb's.
func TestDebianPython3(t *testing.T) {
	python := debianProgram(t, "/usr/bin/python3") // Debian's, not a pyenv shim earlier in PATH
	for _, fh := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "faulthandler"}[fh]
		t.Run(name, func(t *testing.T) {
			args := []string{python}
			if fh {
				args = append(args, "-X", "faulthandler")
			}
			core, _ := crashlab.Crash(t, t.TempDir(), "", append(args, filepath.Join(programs, "crash_lambda.py"))...)
			c := openWithin(t, core, analysis.Options{Exe: python, Offline: true}, time.Minute)
			cls := c.Classification
			if cls.Kind != model.KindNullDeref || cls.Reraised != fh {
				t.Errorf("kind %s, reraised %v; want %s, %v (evidence %q)", cls.Kind, cls.Reraised, model.KindNullDeref, fh, cls.Evidence)
			}
			if d := crashlab.CompareWithGDB(crashlab.GDB(t, python, core), nativeOnly(c)); d != "" {
				t.Errorf("frames differ from gdb:\n%s", d)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// nativeOnly is the crash without the Python frames faultline interleaves
// with the interpreter's (gdb shows only the native ones).
func nativeOnly(c *model.Crash) *model.Crash {
	out := *c
	out.Threads = nil
	for _, th := range c.Threads {
		n := th
		n.Frames = nil
		for _, f := range th.Frames {
			if f.Language != "python" {
				n.Frames = append(n.Frames, f)
			}
		}
		out.Threads = append(out.Threads, n)
	}
	return &out
}
