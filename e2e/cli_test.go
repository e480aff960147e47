package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The commands as users run them (issue 23, item 19): what each prints
// names what it wrote, says what it found, and a usage error is short.

// TestRunSaysWhatItKept: a job that fails without a core and without a
// word on stderr leaves a bundle of its logs only, and faultline run says
// so (it used to list report.md and crash.json it had not written, and to
// read the empty stderr.log as a core dump). A job that crashes: the core
// is analyzed below, so no advice to go and look for one, and the bundle
// lists the core and the reports it holds.
func TestRunSaysWhatItKept(t *testing.T) {
	dir := t.TempDir()
	r := faultline(t, invocation{dir: dir}, "run", "--", "sh", "-c", "exit 3")
	wantExit(t, r, 3)
	wantMatch(t, "run without a crash", r.stdout, `Bundle: \S+/run-001 \(run\.txt, stdout\.log, stderr\.log; inventory\.txt next to it\)`)
	wantContains(t, "run without a crash", r.stdout, "nothing to analyze: no core, and the job wrote nothing to stderr")
	for _, bad := range []string{"report.md", "crash.json", "core dump faultline can read", "ELF header"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("faultline run printed %q for a job that left no core and no log:\n%s", bad, r.stdout)
		}
	}
	b := bundles(t, filepath.Join(dir, "faultline-crashes"))
	if len(b) != 1 {
		t.Fatalf("bundles %v", b)
	}
	if got := dirNames(t, b[0]); got != "run.txt stderr.log stdout.log" {
		t.Errorf("the bundle holds %s", got)
	}

	dir = t.TempDir()
	r = faultline(t, invocation{dir: dir}, "run", "--", program(t, "trainer.c"))
	wantExit(t, r, 139)
	if strings.Contains(r.stdout, "It may have left a core dump") || strings.Contains(r.stdout, "run `faultline analyze CORE`") {
		t.Errorf("faultline run tells to look for the core it analyzed:\n%s", r.stdout)
	}
	wantMatch(t, "run of a crash", r.stdout, `Bundle: \S+/run-001 \(run\.txt, stdout\.log, stderr\.log, core, report\.md, crash\.json; inventory\.txt next to it\)`)
	wantContains(t, "run of a crash", r.stdout, "`load_batch`",
		"**Crash context:** runtime (while the program ran: not loading a library, exiting or in a signal handler)")
	b = bundles(t, filepath.Join(dir, "faultline-crashes"))
	if len(b) != 1 {
		t.Fatalf("bundles %v", b)
	}
	if got := dirNames(t, b[0]); got != "core crash.json report.md run.txt stderr.log stdout.log" {
		t.Errorf("the bundle holds %s", got)
	}
}

// dirNames lists a directory's entries, sorted, space-separated.
func dirNames(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// TestHangSaysDeadlock: `faultline hang PID` on two threads that each hold
// the mutex the other waits for prints the verdict with the stacks, and
// names the report it kept (it used to print the stacks only, the verdict
// being in a report.md it did not name).
func TestHangSaysDeadlock(t *testing.T) {
	dir := t.TempDir()
	p := blockedProcess(t, dir, program(t, "deadlock.c", "-pthread"), 3)
	pid := fmt.Sprint(p.Process.Pid)
	r := faultline(t, invocation{dir: dir}, "hang", pid)
	wantExit(t, r, 0)
	wantContains(t, "hang's report", r.stdout, "kind:      deadlock\n",
		"context:   runtime (while the program ran", "verdict:   Deadlock: thread ", "post_entry (deadlock.c:", "flush_journal (deadlock.c:")
	m := regexp.MustCompile(`the full report \(locks, evidence, next steps\) is in (\S+/report\.md)\n`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("hang does not name its report:\n%s", r)
	}
	md, err := os.ReadFile(filepath.Join(dir, m[1]))
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, "report.md", string(md), "**Kind:** `deadlock`", "ledger", "journal")
}

// blockedProcess starts exe, waits for its "ready" line and then for n of
// its threads to block in futex(2), and returns it; the test ends it.
func blockedProcess(t *testing.T, dir, exe string, n int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	if sc := bufio.NewScanner(out); !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("%s did not say ready", exe)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		blocked := 0
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", cmd.Process.Pid))
		for _, task := range tasks {
			if b, err := os.ReadFile(task); err == nil && strings.HasPrefix(string(b), "202 ") { // futex on x86-64
				blocked++
			}
		}
		if blocked == n {
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s %d of %d threads block", blocked, n)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc: there is no event to wait on
	}
}

// TestAnalyzeTextManyGroups: --format text over many cores gives what the
// markdown report gives first, the determinism verdict and the signature
// groups, then each group's crash (it used to print the crashes one after
// another, ungrouped and with no verdict).
func TestAnalyzeTextManyGroups(t *testing.T) {
	exe := program(t, "trainer.c")
	dir := t.TempDir()
	for i := 1; i <= 3; i++ {
		copyFile(t, crash(t, exe), filepath.Join(dir, fmt.Sprintf("core.%d", i)), false)
	}
	r := faultline(t, invocation{dir: dir}, "analyze", "--format", "text", ".")
	wantExit(t, r, 0)
	wantContains(t, "text report of 3 cores", r.stdout, "faultline: 3 dumps\n", "determinism: deterministic — ",
		"group 1: 3 × load_batch | train_step  [null-deref] in load_batch (trainer.c:", "  dumps: core.1, core.2, core.3\n",
		"== group 1 of 1: load_batch | train_step (the first of its 3 dumps)\n", "kind:      null-deref\n")
	if n := strings.Count(r.stdout, "\nfaultline: "); n != 1 {
		t.Errorf("%d crash reports for one group of three identical cores:\n%s", n, r.stdout)
	}
}

// TestUsageErrorIsShort: a usage error prints the error, the command's
// usage line and where its help is, as cmd/go does — not the whole help.
func TestUsageErrorIsShort(t *testing.T) {
	r := faultline(t, invocation{}, "analyze", "--bogus", "core")
	wantExit(t, r, 2)
	want := "faultline analyze: flag provided but not defined: -bogus\n" +
		"usage: faultline analyze [--format markdown|text|json] [--json [--summary]] [OPEN FLAGS] DUMP... | DIR\n" +
		"Run 'faultline analyze --help' for details.\n"
	if r.stderr != want || r.stdout != "" {
		t.Errorf("analyze --bogus:\n%s\nwant stderr:\n%s", r, want)
	}
	r = faultline(t, invocation{}, "hang", "--format", "pdf", "1")
	wantExit(t, r, 2)
	if lines := strings.Count(r.stderr, "\n"); lines != 3 || !strings.HasPrefix(r.stderr, "faultline hang: ") {
		t.Errorf("hang --format pdf: %d lines of stderr, want 3:\n%s", lines, r.stderr)
	}
	r = faultline(t, invocation{}, "nonsense")
	wantExit(t, r, 2)
	if r.stderr != "faultline: unknown command \"nonsense\"\nRun 'faultline help' for usage.\n" {
		t.Errorf("unknown command:\n%s", r)
	}
}
