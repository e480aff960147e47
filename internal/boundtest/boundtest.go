// Package boundtest builds the faultline binary and runs it as a child
// process under a watchdog, measuring what the run cost: wall time, peak
// resident memory (ru_maxrss of the binary's own process, as GNU time
// reports it) and, when asked, the bytes left in a directory. Tests of hostile inputs assert their bounds on
// these figures, so a regression shows up in the real program, not in a
// function called in-process.
package boundtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis/model"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// Main runs the tests of a package that uses Binary and removes the built
// binary afterwards; call it from TestMain as os.Exit(boundtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	Cleanup()
	return code
}

// Cleanup removes the binary built by Binary, if any.
func Cleanup() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// Binary builds the faultline command once per test process (go build -o)
// and returns its path. FAULTLINE_BOUNDTEST_BIN names a prebuilt binary to
// use instead (to show that a bound fails on an older build).
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("FAULTLINE_BOUNDTEST_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "faultline-boundtest-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "faultline")
		cmd := exec.Command(goTool(), "build", "-o", buildBin, "github.com/faultline-dev/faultline")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Limits are the watchdog's limits for one run: past them the child is
// killed (so a regression fails the test instead of exhausting the shared
// machine). Zero fields take the defaults (60 s, 2 GiB).
type Limits struct {
	Wall   time.Duration // kill after this long
	RSSKiB int64         // kill when VmRSS exceeds this many KiB
}

// Cmd describes one run of the binary.
type Cmd struct {
	Args  []string
	Env   []string // added to the test's environment
	Dir   string
	Stdin []byte
	// StdinOpen keeps stdin open after Stdin is written, until the child
	// exits (a client that sent its bytes and waits).
	StdinOpen bool
	Limits    Limits
}

// Result is what one run cost and printed.
type Result struct {
	Exit       int // exit status; -1 when killed by a signal
	Stdout     string
	Stderr     string
	Wall       time.Duration
	MaxRSSKiB  int64  // ru_maxrss of the binary (KiB), as GNU time reports it
	Killed     string // why the watchdog killed the child ("" if it did not)
	CPUTime    time.Duration
	PeakRSSKiB int64 // the largest VmRSS the watchdog saw
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d, wall %v, cpu %v, maxrss %d KiB%s", r.Exit, r.Wall.Round(time.Millisecond),
		r.CPUTime.Round(time.Millisecond), r.MaxRSSKiB, map[bool]string{true: ", killed: " + r.Killed, false: ""}[r.Killed != ""])
}

// Run runs the faultline binary with c and returns what it cost.
func Run(t testing.TB, c Cmd) Result {
	t.Helper()
	return RunProgram(t, Binary(t), c)
}

// RunProgram runs bin with c under the watchdog.
func RunProgram(t testing.TB, bin string, c Cmd) Result {
	t.Helper()
	lim := c.Limits
	if lim.Wall == 0 {
		lim.Wall = 60 * time.Second
	}
	if lim.RSSKiB == 0 {
		lim.RSSKiB = 2 << 20
	}
	usage := filepath.Join(t.TempDir(), "rusage")
	cmd := exec.Command(gnuTime(t), append([]string{"-q", "-f", "%M %U %S %x", "-o", usage, bin}, c.Args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Dir = c.Dir
	cmd.Stdin = bytes.NewReader(c.Stdin)
	var stdinW *os.File
	if c.StdinOpen {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		cmd.Stdin, stdinW = r, w
		defer w.Close()
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	if stdinW != nil {
		go stdinW.Write(c.Stdin) // the pipe stays open until Run returns
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wd watchdog
	done := make(chan struct{})
	go func() { wd.watch(ctx, cmd.Process.Pid, lim, start); close(done) }()
	err := cmd.Wait()
	cancel()
	<-done
	r := Result{Stdout: stdout.String(), Stderr: stderr.String(), Wall: time.Since(start), Killed: wd.killed, PeakRSSKiB: wd.peak}
	r.Exit = cmd.ProcessState.ExitCode()
	if err != nil && r.Exit == 0 {
		t.Fatalf("wait: %v", err)
	}
	r.readUsage(t, usage)
	t.Logf("faultline %s: %v", strings.Join(c.Args, " "), r)
	return r
}

type watchdog struct {
	killed string
	peak   int64
}

func (w *watchdog) watch(ctx context.Context, timePID int, lim Limits, start time.Time) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rss := VmRSSKiB(childOf(timePID))
		w.peak = max(w.peak, rss)
		switch {
		case rss > lim.RSSKiB:
			w.killed = fmt.Sprintf("VmRSS %d KiB over %d KiB", rss, lim.RSSKiB)
		case time.Since(start) > lim.Wall:
			w.killed = fmt.Sprintf("still running after %v", lim.Wall)
		default:
			continue
		}
		syscall.Kill(-timePID, syscall.SIGKILL) // GNU time and the binary: one process group
		return
	}
}

// gnuTime is GNU time (Debian's package time, which .ci/test installs). The
// binary runs under it because ru_maxrss of a direct child of a Go process
// is wrong: Go starts children with vfork, and exec records the parent's
// peak RSS into the child's (the test process's hundreds of MiB). GNU time
// forks a real copy of itself, so the figure it reports is the binary's.
func gnuTime(t testing.TB) string {
	const p = "/usr/bin/time"
	if !fileExists(p) {
		t.Fatalf("%s is missing: apt-get install time (.ci/test installs it)", p)
	}
	return p
}

// readUsage fills r's memory and CPU figures from what GNU time wrote
// ("%M %U %S %x"). Killed by a signal, the binary's exit status reads 0
// and time exits with 128+signal: r.Exit is then -1, as for a signal.
func (r *Result) readUsage(t testing.TB, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	f := strings.Fields(string(b))
	if err != nil || len(f) != 4 {
		if r.Exit == -1 { // the watchdog killed time before it wrote
			return
		}
		t.Fatalf("GNU time wrote no usage (%v): %q", err, b)
	}
	r.MaxRSSKiB, _ = strconv.ParseInt(f[0], 10, 64)
	user, _ := strconv.ParseFloat(f[1], 64)
	sys, _ := strconv.ParseFloat(f[2], 64)
	r.CPUTime = time.Duration((user + sys) * float64(time.Second))
	if r.Exit > 128 && f[3] == "0" {
		r.Exit = -1
	}
}

// childOf is the pid of timePID's child (the binary), or timePID while it
// has none yet.
func childOf(timePID int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(timePID) + "/task/" + strconv.Itoa(timePID) + "/children")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		if pid, err := strconv.Atoi(f[0]); err == nil {
			return pid
		}
	}
	return timePID
}

// VmRSSKiB reads the resident set size of pid from /proc (0 if gone).
func VmRSSKiB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// DirBytes is the total size of the regular files under dir.
func DirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Crash decodes the crash model printed by `analyze --json`.
func Crash(t testing.TB, r Result) model.Crash {
	t.Helper()
	var c model.Crash
	if err := json.Unmarshal([]byte(r.Stdout), &c); err != nil {
		t.Fatalf("analyze --json printed no crash model (%v): %s\nstderr: %s", err, head(r.Stdout), head(r.Stderr))
	}
	return c
}

// HasProblem reports whether one of c's problems contains substr.
func HasProblem(c model.Crash, substr string) bool {
	for _, p := range c.Problems {
		if strings.Contains(p.Message, substr) {
			return true
		}
	}
	return false
}

func head(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}
