package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// repoRoot is the checkout the binary is built from (this package's parent).
var repoRoot, _ = filepath.Abs("..")

// binary is the faultline executable built by TestMain.
var binary string

// scratch is the directory TestMain creates for the binary and the
// programs the tests compile once (removed at the end).
var scratch string

func TestMain(m *testing.M) {
	code := func() int {
		var err error
		if scratch, err = os.MkdirTemp("", "faultline-e2e-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(scratch)
		binary = filepath.Join(scratch, "faultline")
		start := time.Now()
		build := exec.Command("go", "build", "-o", binary, ".")
		build.Dir = repoRoot
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build -o %s .: %v\n%s", binary, err, out)
			return 1
		}
		fmt.Fprintf(os.Stderr, "e2e: built %s in %.1fs\n", binary, time.Since(start).Seconds())
		// Cores on for the programs the tests crash (they inherit it).
		var lim syscall.Rlimit
		if syscall.Getrlimit(syscall.RLIMIT_CORE, &lim) == nil {
			lim.Cur = lim.Max
			syscall.Setrlimit(syscall.RLIMIT_CORE, &lim)
		}
		return m.Run()
	}()
	os.Exit(code)
}

// result is what one run of a command left.
type result struct {
	args           []string
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("`%s` exited %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, clip(r.stdout), clip(r.stderr))
}

func clip(s string) string {
	if len(s) > 4000 {
		return s[:2000] + "\n[...]\n" + s[len(s)-2000:]
	}
	return s
}

// invocation says how to run a command.
type invocation struct {
	dir     string        // working directory (default: a new temporary one)
	stdin   io.Reader     // standard input (default: none)
	env     []string      // added to the environment
	timeout time.Duration // default 60s
}

// faultline runs the binary with args.
func faultline(t *testing.T, inv invocation, args ...string) result {
	t.Helper()
	return command(t, inv, binary, args...)
}

// command runs name with args and returns what it left; a run that
// outlives its timeout is killed (its whole process group) and fails the test.
func command(t *testing.T, inv invocation, name string, args ...string) result {
	t.Helper()
	if inv.timeout == 0 {
		inv.timeout = 60 * time.Second
	}
	if inv.dir == "" {
		inv.dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), inv.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = inv.dir
	cmd.Env = append(os.Environ(), inv.env...)
	cmd.Stdin = inv.stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	r := result{args: append([]string{filepath.Base(name)}, args...), stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after %v, killed\n%s", strings.Join(r.args, " "), inv.timeout, r)
	}
	if cmd.ProcessState == nil {
		t.Fatalf("%s: %v", strings.Join(r.args, " "), err)
	}
	r.code = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.code = 128 + int(ws.Signal())
	}
	return r
}

// wantExit fails the test unless r exited with code.
func wantExit(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit %d\n%s", code, r)
	}
}

// wantContains fails the test for each of wants that s lacks.
func wantContains(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, clip(s))
		}
	}
}

// wantMatch fails the test for each regular expression of wants that s
// does not match.
func wantMatch(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !regexp.MustCompile(w).MatchString(s) {
			t.Errorf("%s does not match %q:\n%s", what, w, clip(s))
		}
	}
}

// copyFile copies src to dst (mode 0644, or 0755 when exec).
func copyFile(t *testing.T, src, dst string, exec bool) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o644)
	if exec {
		mode = 0o755
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}
