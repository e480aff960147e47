package realworld_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestGoProgram: a Go program (testdata/programs/gopanic.go, built by the
// go command running the tests) run with GOTRACEBACK=crash, whose runtime
// ends a fatal panic with SIGABRT through its own signal handler.
//   - nil: a nil dereference the runtime turns into a panic through
//     runtime.sigpanic → kind null-deref in main.scoreOf, the function and
//     line the Go runtime's own traceback names (gdb shows `??` there: the
//     faulting pc is the frame's "return address", looked up as is).
//   - killed: `kill -SEGV` while it spins (the signal lands on any of its
//     threads); the runtime's handler calls
//     crash(), whose SIGABRT its handler catches again → killed, by the
//     kill's pid, read from the inner signal frame.
//
// Every thread's frames equal gdb's, but for that frame.
func TestGoProgram(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go is required: %v", err)
	}
	bin := filepath.Join(mustTempDir(t), "gopanic")
	if out, err := exec.Command(goTool, "build", "-o", bin, filepath.Join(programs, "gopanic.go")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Setenv("GOTRACEBACK", "crash")
	t.Run("nil", func(t *testing.T) {
		core, out := crashlab.Crash(t, t.TempDir(), "", bin, "nil")
		c := openWithin(t, core, analysis.Options{Exe: bin, Offline: true}, time.Minute)
		cls := c.Classification
		if cls.Kind != model.KindNullDeref || culprit(c) != "main.scoreOf" || !strings.HasPrefix(cls.Signature, "main.scoreOf | main.total") {
			t.Errorf("kind %s, culprit %q, signature %q; want null-deref in main.scoreOf:\n%s", cls.Kind, culprit(c), cls.Signature, strings.Join(cls.Evidence, "\n"))
		}
		compareGoWithGDB(t, crashlab.GDB(t, bin, core), c, goTraceback(t, out, "main.scoreOf"))
	})
	t.Run("killed", func(t *testing.T) {
		s := crashlab.Start(t, t.TempDir(), "ready", bin, "spin")
		time.Sleep(200 * time.Millisecond)
		sender := exec.Command("kill", "-SEGV", itoa(s.Pid()))
		if out, err := sender.CombinedOutput(); err != nil {
			t.Fatalf("kill: %v %s", err, out)
		}
		core := s.WaitCore(t)
		c := openWithin(t, core, analysis.Options{Exe: bin, Offline: true}, time.Minute)
		cls := c.Classification
		if cls.Kind != model.KindKilled || !strings.HasPrefix(cls.Signature, "killed by SIGSEGV") ||
			!strings.Contains(strings.Join(cls.Evidence, "\n"), fmt.Sprintf("sent by pid %d", sender.Process.Pid)) {
			t.Errorf("kind %s, signature %q; want killed by SIGSEGV from pid %d:\n%s", cls.Kind, cls.Signature, sender.Process.Pid, strings.Join(cls.Evidence, "\n"))
		}
		compareGoWithGDB(t, crashlab.GDB(t, bin, core), c, "")
	})
}

// goTraceback returns fn's frame as the Go runtime's traceback on stderr
// prints it, as a crashlab.FrameLine ("fn at file:line").
func goTraceback(t *testing.T, out, fn string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(fn) + `\(.*\)\n\t(\S+):(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the Go traceback names no %s:\n%s", fn, out)
	}
	return fn + " at " + m[1] + ":" + m[2]
}

// compareGoWithGDB compares every thread with gdb's frames; the frame past
// runtime.sigpanic, which gdb cannot name, is compared with the Go
// runtime's traceback (sigpanicCaller) instead, and the outermost `??`
// frames are left out on both sides: past the last frame either names,
// gdb walks on by guesses (Go's system stacks end in words that are no
// return addresses) where faultline stops.
func compareGoWithGDB(t *testing.T, gdb *logs.GDBLog, c *model.Crash, sigpanicCaller string) {
	t.Helper()
	n := compareThreads(t, gdb, c, func(want []string, th model.Thread) ([]string, []string) {
		want = trimUnnamed(want)
		for i := 1; i < len(want); i++ {
			if strings.HasPrefix(want[i-1], "runtime.sigpanic") && want[i] == "??" && sigpanicCaller != "" {
				want[i] = sigpanicCaller
			}
		}
		return want, trimUnnamed(crashlab.ModelLines(th))
	})
	t.Logf("%d threads, %d frames compared", len(gdb.Threads), n)
}

// trimUnnamed drops the trailing `??` frames.
func trimUnnamed(lines []string) []string {
	for len(lines) > 0 && lines[len(lines)-1] == "??" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
