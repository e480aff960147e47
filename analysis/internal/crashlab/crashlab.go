// Package crashlab builds small programs the way users build them, crashes
// or kills them into real kernel cores, and reads gdb's backtrace of the
// same core: the fixtures of the engine's tests against programs and
// cores nobody here wrote. It is used only from tests.
package crashlab

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis/logs"
)

// Build compiles the sources with compiler ("gcc", "clang++", ...) and the
// flags into dir/name and returns the binary's path.
func Build(t testing.TB, dir, name, compiler string, sources []string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	args := append(append([]string{}, flags...), "-o", bin)
	args = append(args, sources...)
	if out, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, strings.Join(args, " "), err, out)
	}
	return bin
}

// checkCorePattern fails the test when the kernel does not write cores as
// "core" files in the crashing process's cwd.
func checkCorePattern(t testing.TB) {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	if err != nil {
		t.Fatalf("reading core_pattern: %v", err)
	}
	if p := strings.TrimSpace(string(b)); strings.HasPrefix(p, "|") || strings.Contains(p, "/") {
		t.Fatalf("kernel.core_pattern is %q: these tests need cores written to the cwd (sysctl kernel.core_pattern=core)", p)
	}
}

// findCore returns the core the kernel left in dir.
func findCore(t testing.TB, dir string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "core*"))
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
			return m
		}
	}
	t.Fatalf("no core in %s (core_pattern, ulimit -c)", dir)
	return ""
}

// Crash runs argv in dir with `ulimit -c unlimited` (plus the extra ulimit
// settings, e.g. "-s 256"), expects it to die of a signal and returns the
// core the kernel wrote and the program's output.
func Crash(t testing.TB, dir string, ulimits string, argv ...string) (core string, output string) {
	t.Helper()
	checkCorePattern(t)
	script := "ulimit -c unlimited; " + ulimits + "\nexec \"$@\""
	cmd := exec.Command("bash", append([]string{"-c", script, "crash"}, argv...)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := runWithTimeout(cmd, time.Minute)
	if err == nil {
		t.Fatalf("%s exited 0; it should have crashed\n%s", argv[0], out.String())
	}
	return findCore(t, dir), out.String()
}

func runWithTimeout(cmd *exec.Cmd, d time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("%s ran longer than %v", cmd.Path, d)
	}
}

// Started is a program started by Start, waiting to be signalled.
type Started struct {
	Cmd  *exec.Cmd
	Dir  string
	Out  *bytes.Buffer
	done chan error
}

// readyTimeout bounds how long Start waits for the ready text.
const readyTimeout = 3 * time.Minute

// Start runs argv in dir with cores enabled and waits until it printed
// ready on its output (not at all when ready is "").
func Start(t testing.TB, dir, ready string, argv ...string) *Started {
	t.Helper()
	checkCorePattern(t)
	cmd := exec.Command("bash", append([]string{"-c", "ulimit -c unlimited; exec \"$@\"", "run"}, argv...)...)
	cmd.Dir = dir
	s := &Started{Cmd: cmd, Dir: dir, Out: &bytes.Buffer{}, done: make(chan error, 1)}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	// A stdin that stays open: interactive programs (sqlite3) wait on it.
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = inR
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	inR.Close()
	t.Cleanup(func() { inW.Close() })
	lines := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		signalled := false
		for {
			n, err := pr.Read(buf)
			s.Out.Write(buf[:n])
			if !signalled && strings.Contains(s.Out.String(), ready) {
				signalled = true
				close(lines)
			}
			if err != nil {
				pr.Close()
				return
			}
		}
	}()
	go func() { s.done <- cmd.Wait() }()
	if ready == "" {
		return s
	}
	// A bound on start-up, not a speed check: mpirun under env took 32 s
	// on a 2-core machine running the other stages beside it.
	select {
	case <-lines:
	case <-time.After(readyTimeout):
		cmd.Process.Kill()
		t.Fatalf("%s did not print %q within %v", argv[0], ready, readyTimeout)
	}
	return s
}

// Pid is the started program's process id (bash exec'd it).
func (s *Started) Pid() int { return s.Cmd.Process.Pid }

// WaitCore waits for the program to die and returns the kernel's core.
func (s *Started) WaitCore(t testing.TB) string {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		s.Cmd.Process.Kill()
		t.Fatal("the program did not die of the signal")
	}
	return findCore(t, s.Dir)
}

// GDB runs gdb's `thread apply all bt` on the core (the oracle).
func GDB(t testing.TB, bin, core string, searchDirs ...string) *logs.GDBLog {
	t.Helper()
	return GDBProgram(t, "gdb", bin, core, searchDirs...)
}

// GDBProgram is GDB with another gdb binary (gdb-multiarch for aarch64
// cores).
func GDBProgram(t testing.TB, gdb, bin, core string, searchDirs ...string) *logs.GDBLog {
	t.Helper()
	args := []string{"-batch", "-nx", "-ex", "set pagination off", "-ex", "set width 0"}
	if len(searchDirs) > 0 {
		args = append(args, "-ex", "set solib-search-path "+strings.Join(searchDirs, ":"))
	}
	args = append(args, "-ex", "info threads", "-ex", "thread apply all bt", bin, core)
	out, err := exec.Command(gdb, args...).Output()
	if err != nil {
		t.Fatalf("gdb: %v", err)
	}
	log, err := logs.ParseGDB(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("parsing gdb output: %v", err)
	}
	return log
}

// WaitInSyscall waits until the started program's main thread sleeps in
// system call nr (e.g. 34, pause(2) on x86-64), so that a signal sent now
// finds it there.
func (s *Started) WaitInSyscall(t testing.TB, nr int) {
	t.Helper()
	want := fmt.Sprint(nr)
	for i := 0; i < 3000; i++ {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", s.Pid()))
		if err == nil && strings.Fields(string(b) + " x")[0] == want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("pid %d never slept in syscall %d", s.Pid(), nr)
}
