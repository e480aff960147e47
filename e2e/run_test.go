package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// debianPython is the interpreter the Python jobs run on: Debian's, whose
// CPython 3.11 layout faultline reads from cores.
const debianPython = "/usr/bin/python3"

// pythonPath returns a PATH whose python and python3 are Debian's.
func pythonPath(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for _, name := range []string{"python", "python3"} {
		if err := os.Symlink(debianPython, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return "PATH=" + bin + ":" + os.Getenv("PATH")
}

// bundles lists the run-NNN bundles of the one session under dir/out.
func bundles(t *testing.T, out string) []string {
	t.Helper()
	b, _ := filepath.Glob(filepath.Join(out, "*", "run-*"))
	return b
}

// TestRunTrainREADME runs the README's `faultline run --repeat 20 -- python
// train.py`: a job that raises on runs 7 and 14. The rate, one signature
// group, a bundle per failure with the logs and the report, nothing kept
// of the runs that passed, and the status of the first failed run.
func TestRunTrainREADME(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join("testdata", "train.py"), filepath.Join(dir, "train.py"), false)
	r := example(t, "faultline run --repeat 20 -- python train.py", invocation{dir: dir, env: []string{pythonPath(t)}, timeout: 5 * time.Minute})
	wantExit(t, r, 1)
	wantContains(t, "run report", r.stdout, "Failure rate: 2/20 = 10.0%", "Every failure has the same signature",
		"| 2 | `train | <module>` | 7, 14 | "+dir+"/faultline-crashes/", "Uncaught Python exception FloatingPointError: loss is NaN at run 7 in train (train.py:")
	wantContains(t, "progress", r.stderr, "run 6/20: ok", "run 7/20: FAILED exit 1  train | <module>", "run 20/20: ok")
	got := bundles(t, filepath.Join(dir, "faultline-crashes"))
	if len(got) != 2 || filepath.Base(got[0]) != "run-007" || filepath.Base(got[1]) != "run-014" {
		t.Fatalf("bundles %v, want run-007 and run-014", got)
	}
	for _, f := range []string{"run.txt", "stdout.log", "stderr.log", "report.md", "crash.json"} {
		if _, err := os.Stat(filepath.Join(got[0], f)); err != nil {
			t.Errorf("bundle lacks %s", f)
		}
	}
	log, _ := os.ReadFile(filepath.Join(got[0], "stderr.log"))
	rep, _ := os.ReadFile(filepath.Join(got[0], "report.md"))
	wantContains(t, "stderr.log", string(log), "FloatingPointError: loss is NaN at run 7")
	wantContains(t, "report.md", string(rep), "train.py", "FloatingPointError")
}

// TestRunFlakyREADME runs the README's transcript of `faultline run
// --repeat 20` on testdata/python/flaky.py and checks every line the
// README shows against what the binary printed (session time stamps and
// the working directory aside). Both of the job's crashes are in code
// built here (testdata/python/bin), so the transcript holds on any
// bookworm machine whatever the build of its python3.11, _ctypes or
// libffi: a signature naming a module offset ("_ctypes….so@0xe197") would
// change with Debian's next security update, and the README may not show
// one.
func TestRunFlakyREADME(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	flaky := filepath.Join(repoRoot, "testdata", "python", "flaky.py")
	const line = "faultline run --repeat 20 -- python3 testdata/python/flaky.py /tmp/count"
	r := example(t, "faultline run --repeat 20 -- python3 testdata/python/flaky.py /tmp/count",
		invocation{dir: dir, env: []string{pythonPath(t)}, timeout: 5 * time.Minute},
		"testdata/python/flaky.py", flaky, "/tmp/count", count)
	wantExit(t, r, 139)
	stamp := regexp.MustCompile(`\d{8}-\d{6}\.\d{3}`)
	norm := func(s string) string {
		s = strings.ReplaceAll(s, flaky, "testdata/python/flaky.py")
		s = strings.ReplaceAll(s, count, "/tmp/count")
		s = strings.ReplaceAll(s, dir, "/home/me")
		return stamp.ReplaceAllString(s, "SESSION")
	}
	printed := map[string]bool{}
	for _, l := range strings.Split(norm(r.stdout+"\n"+r.stderr), "\n") {
		printed[strings.TrimSpace(l)] = true
	}
	transcript := readmeTranscript(t, line)
	if len(transcript) < 8 {
		t.Fatalf("README transcript of %q: %q", line, transcript)
	}
	moduleOffset := regexp.MustCompile(`\S+@0x[0-9a-f]+`)
	for _, l := range transcript {
		if l == "..." || l == "" {
			continue
		}
		if m := moduleOffset.FindString(l); m != "" {
			t.Errorf("README shows the module offset %s: it depends on the build of that module, not on flaky.py", m)
		}
		if !printed[norm(l)] {
			t.Errorf("README shows %q; faultline printed:\n%s", l, norm(r.stdout+r.stderr))
		}
	}
}

// readmeTranscript returns the lines README.md shows after `$ LINE` in the
// same code block.
func readmeTranscript(t *testing.T, line string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "$ "+line+"\n")
	if !ok {
		t.Fatalf("README.md has no `$ %s`", line)
	}
	block, _, _ := strings.Cut(after, "```")
	return strings.Split(block, "\n")
}

// TestRunExitStatus: faultline run exits with the job's status, as a shell
// reports it (128+N for a death by signal N), and 0 only when the job
// succeeded; a crash's core is analyzed from the bundle.
func TestRunExitStatus(t *testing.T) {
	trainer := program(t, "trainer.c")
	cases := []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"--", "sh", "-c", "exit 3"}, 3, "the job failed: exit 3"},
		{[]string{"--", "sh", "-c", "kill -TERM $$"}, 143, "the job failed: SIGTERM"},
		{[]string{"--", trainer}, 139, "`load_batch`"},
		{[]string{"--repeat", "3", "--", "true"}, 0, "Failure rate: 0/3"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		r := faultline(t, invocation{dir: dir}, append([]string{"run"}, c.args...)...)
		if r.code != c.exit || !strings.Contains(r.stdout, c.want) {
			t.Errorf("want exit %d and %q\n%s", c.exit, c.want, r)
		}
		if c.exit == 139 {
			b := bundles(t, filepath.Join(dir, "faultline-crashes"))
			if len(b) != 1 {
				t.Fatalf("bundles %v", b)
			}
			if _, err := os.Stat(filepath.Join(b[0], "core")); err != nil {
				t.Errorf("the crash's core is not in the bundle: %v", err)
			}
		}
	}
}

// TestRunChildCore runs a PyTorch-DataLoader-shaped job (testdata/
// dataloader.py): a forked worker writes PyTorch's handler message with its
// NUL byte and segfaults, the parent exits 1. faultline run exits 1, keeps
// the worker's core (not left behind in the job's directory) and reports
// the worker's Python line.
func TestRunChildCore(t *testing.T) {
	job, _ := filepath.Abs(filepath.Join("testdata", "dataloader.py"))
	crashLine := fmt.Sprintf("dataloader.py:%d", markerLine(t, "dataloader.py", "WORKER CRASH"))
	dir := t.TempDir()
	r := faultline(t, invocation{dir: dir, timeout: 3 * time.Minute}, "run", "--", debianPython, job)
	wantExit(t, r, 1)
	wantMatch(t, "run report", r.stdout, `its child process \d+ \(python3\) crashed and left a core, moved into the bundle as core\.\d+`)
	wantContains(t, "run report", r.stdout, "load_sample", crashLine)
	b := bundles(t, filepath.Join(dir, "faultline-crashes"))
	if len(b) != 1 {
		t.Fatalf("bundles %v", b)
	}
	if m, _ := filepath.Glob(filepath.Join(b[0], "core.*")); len(m) != 1 {
		t.Errorf("the worker's core is not in the bundle: %v", m)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "core*")); len(m) != 0 {
		t.Errorf("cores left in the job's directory: %v", m)
	}
	log, _ := os.ReadFile(filepath.Join(b[0], "stderr.log"))
	if !bytes.Contains(log, []byte("worker.\n\x00")) {
		t.Fatalf("the job's stderr has no NUL byte after PyTorch's message: %q", log)
	}
}
