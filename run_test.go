package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/capture"
)

// pythonForJobs returns Debian's CPython 3.11, which the Python test jobs
// run on, or skips.
func pythonForJobs(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3.11", "/usr/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no /usr/bin/python3")
	return ""
}

// TestRunRepeatRate runs testdata/python/flaky.py, which fails on every
// fourth run (alternately in a C extension and through ctypes), 20 times
// under `faultline run`: 5 failures, two signature groups, each failure a
// bundle with the core the kernel wrote and its analysis.
func TestRunRepeatRate(t *testing.T) {
	py := pythonForJobs(t)
	if p := capture.ReadCorePattern(); strings.HasPrefix(p.Pattern, "|") {
		t.Skipf("core_pattern pipes cores to a helper (%s): this test needs cores written as files", p.Pattern)
	}
	dir := t.TempDir()
	job, _ := filepath.Abs("testdata/python/flaky.py")
	var out, errOut bytes.Buffer
	args := []string{"run", "--repeat", "20", "--json", "--out", filepath.Join(dir, "bundles"), "-C", dir,
		"--", py, job, filepath.Join(dir, "state")}
	// The first failure (run 4, SIGSEGV) is the status faultline run exits with.
	if code := run(args, &out, &errOut); code != 139 {
		t.Fatalf("faultline run exited %d, want 139: %s", code, errOut.String())
	}
	var rep capture.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if rep.Schema != capture.RunSchema || rep.Runs != 20 || rep.Failures != 5 || rep.Rate != 0.25 {
		t.Fatalf("runs %d failures %d rate %v", rep.Runs, rep.Failures, rep.Rate)
	}
	if rep.RateLow >= 0.25 || rep.RateHigh <= 0.25 {
		t.Errorf("interval %v-%v does not hold the rate", rep.RateLow, rep.RateHigh)
	}
	if len(rep.Groups) != 2 || rep.Groups[0].Count != 3 || rep.Groups[1].Count != 2 {
		t.Fatalf("groups %+v", rep.Groups)
	}
	if !strings.HasPrefix(rep.Groups[0].Signature, "read_sample") {
		t.Errorf("the C extension's group is %q", rep.Groups[0].Signature)
	}
	for _, r := range rep.Results {
		if r.Run%4 != 0 {
			if r.Failed || r.Bundle != "" {
				t.Errorf("run %d: %+v", r.Run, r)
			}
			continue
		}
		if !r.Failed || r.Signal != "SIGSEGV" || r.Exit != 139 || r.PeakRSS <= 0 {
			t.Errorf("run %d: %+v", r.Run, r)
		}
		for _, f := range []string{"core", "stderr.log", "report.md", "crash.json", "run.txt"} {
			if _, err := os.Stat(filepath.Join(r.Bundle, f)); err != nil {
				t.Errorf("run %d: bundle lacks %s", r.Run, f)
			}
		}
		// The crash line of the job, read from the core.
		b, _ := os.ReadFile(filepath.Join(r.Bundle, "crash.json"))
		marker := "CRASH A"
		if r.Run%8 == 0 {
			marker = "CRASH B"
		}
		want := fmt.Sprintf(`"line": %d`, lineWith(t, job, marker))
		if !bytes.Contains(b, []byte(want)) || !bytes.Contains(b, []byte(`"language": "python"`)) {
			t.Errorf("run %d: crash.json has no Python frame at %s", r.Run, want)
		}
	}
	inv, err := os.ReadFile(filepath.Join(rep.Session, "inventory.txt"))
	if err != nil || !bytes.Contains(inv, []byte("## Debian packages")) || !bytes.Contains(inv, []byte("libc6 ")) {
		t.Errorf("inventory: %v\n%s", err, inv)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "core*")); len(matches) != 0 {
		t.Errorf("cores left in the job's directory: %v", matches)
	}
}

func lineWith(t *testing.T, path, marker string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("%s has no %q", path, marker)
	return 0
}

// TestHangDeadlock runs testdata/python/deadlock.py, waits until both its
// workers are blocked in futex(2) on the lock the other holds, and runs
// `faultline hang` on it: both workers show the Python line of the lock
// they wait for, with the native lock-acquire frames above it.
func TestHangDeadlock(t *testing.T) {
	py := pythonForJobs(t)
	job, _ := filepath.Abs("testdata/python/deadlock.py")
	cmd := exec.Command(py, job)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	// Both workers print what they hold before taking the other lock.
	sc := bufio.NewScanner(stdout)
	for i := 0; i < 2; i++ {
		if !sc.Scan() {
			t.Fatalf("the job ended early: %v", sc.Err())
		}
	}
	pid := cmd.Process.Pid
	waitForBlockedThreads(t, pid, 3) // main joins, the workers wait
	var out, errOut bytes.Buffer
	args := []string{"hang", "--format", "json", "--out", t.TempDir(), fmt.Sprint(pid)}
	if code := run(args, &out, &errOut); code != 0 {
		t.Fatalf("faultline hang exited %d: %s", code, errOut.String())
	}
	var c struct {
		Threads []struct {
			ID     int
			Frames []struct {
				Function, File, Language string
				Line                     int
			}
		}
		Crash struct{ Kind string }
	}
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Threads) != 3 {
		t.Fatalf("%d threads, want 3", len(c.Threads))
	}
	want := map[string]int{"transfer_ab": lineWith(t, job, "DEADLOCK A"), "transfer_ba": lineWith(t, job, "DEADLOCK B")}
	for _, th := range c.Threads {
		native := false
		for _, f := range th.Frames {
			if f.Function == "PyThread_acquire_lock_timed" {
				native = true
			}
			if line, ok := want[f.Function]; ok && f.Language == "python" {
				if f.Line != line || f.File != job {
					t.Errorf("thread %d: %s at %s:%d, want line %d", th.ID, f.Function, f.File, f.Line, line)
				}
				if !native {
					t.Errorf("thread %d: no native lock frame above %s", th.ID, f.Function)
				}
				delete(want, f.Function)
			}
		}
	}
	if len(want) != 0 {
		t.Errorf("no thread shows %v", want)
	}
	if errOut.Len() == 0 || !strings.Contains(errOut.String(), "wrote") {
		t.Errorf("stderr: %s", errOut.String())
	}
}

// waitForBlockedThreads waits until n threads of pid sit in futex(2)
// (/proc/PID/task/TID/syscall starts with the syscall number, 202 on x86-64).
func waitForBlockedThreads(t *testing.T, pid, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		blocked := 0
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
		for _, task := range tasks {
			if b, err := os.ReadFile(task); err == nil && strings.HasPrefix(string(b), "202 ") {
				blocked++
			}
		}
		if blocked >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s only %d of %d threads block in futex", blocked, n)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc: there is no event to wait on
	}
}
