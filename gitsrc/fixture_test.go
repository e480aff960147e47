package gitsrc

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
)

// The fixture: testdata/gitsrc/mkrepo.sh's repository served by a real
// `git http-backend` (behind net/http/cgi) and a real `git daemon`, both
// on 127.0.0.1, and a crash program compiled from a checkout of its v1.0
// tag with DWARF paths moved under a long fake build prefix and a
// .note.package naming the HTTP repository, with its core dump.

// buildPrefix is the kind of prefix ROCm packages are built under (seed 000).
const buildPrefix = "/longer_pathname_so_that_rpms_can_support_packaging_the_debug_info_for_all_os_profiles/src/crashy"

type fixture struct {
	dir      string // everything below lives here
	work     string // working clone with the whole history
	httpURL  string // http://127.0.0.1:PORT/ (crashy.git, strict.git)
	gitURL   string // git://127.0.0.1:PORT/
	exe      string // the crash program
	core     string // its core dump
	rev      map[string]string
	crash    *analysis.Crash
	cleanups []func()
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fix != nil {
		for _, f := range fix.cleanups {
			f()
		}
		os.RemoveAll(fix.dir)
	}
	os.Exit(code)
}

func getFixture(t *testing.T) *fixture {
	t.Helper()
	fixOnce.Do(func() { fix, fixErr = newFixture() })
	if fixErr != nil {
		t.Fatalf("fixture: %v", fixErr)
	}
	return fix
}

func run(dir string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return strings.TrimSpace(out.String()), nil
}

func newFixture() (*fixture, error) {
	for _, tool := range []string{"git", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is needed (apt-get install git gcc gdb)", tool)
		}
	}
	dir, err := os.MkdirTemp("", "gitsrc-fixture-")
	if err != nil {
		return nil, err
	}
	f := &fixture{dir: dir, work: filepath.Join(dir, "work"), rev: map[string]string{}}
	fix = f // for TestMain's cleanup even when a later step fails
	script, _ := filepath.Abs("../testdata/gitsrc/mkrepo.sh")
	if _, err := run(dir, "bash", script, dir); err != nil {
		return nil, err
	}
	// Commits by subject, for the assertions.
	log, err := run(f.work, "git", "log", "--format=%H %s", "main")
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(log, "\n") {
		h, s, _ := strings.Cut(l, " ")
		f.rev[s] = h
	}
	if f.rev["v1.0"], err = run(f.work, "git", "rev-parse", "v1.0^{commit}"); err != nil {
		return nil, err
	}
	if err := f.serve(); err != nil {
		return nil, err
	}
	if err := f.buildCrash(); err != nil {
		return nil, err
	}
	return f, nil
}

// serve starts git http-backend (CGI) and git daemon on 127.0.0.1.
func (f *fixture) serve() error {
	execPath, err := run("", "git", "--exec-path")
	if err != nil {
		return err
	}
	srv := filepath.Join(f.dir, "srv")
	h := &cgi.Handler{
		Path: filepath.Join(execPath, "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + srv, "GIT_HTTP_EXPORT_ALL=1"},
	}
	hs := httptest.NewServer(h)
	f.cleanups = append(f.cleanups, hs.Close)
	f.httpURL = hs.URL + "/"

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	d := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--base-path="+srv,
		"--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), srv)
	var dlog bytes.Buffer
	d.Stdout, d.Stderr = &dlog, &dlog
	// Its own process group: the daemon forks a child per connection, and
	// the cleanup ends the group (only processes this test started).
	d.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	d.WaitDelay = 5 * time.Second
	if err := d.Start(); err != nil {
		return err
	}
	f.cleanups = append(f.cleanups, func() {
		syscall.Kill(-d.Process.Pid, syscall.SIGTERM)
		d.Wait()
	})
	f.gitURL = fmt.Sprintf("git://127.0.0.1:%d/", port)
	// Wait until the daemon answers (or gives up).
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("git daemon did not listen on %d: %v\n%s", port, err, dlog.String())
		}
		time.Sleep(20 * time.Millisecond) // poll the condition: the daemon accepts
	}
}

// buildCrash compiles the crash program from a checkout of v1.0 and dumps its core.
func (f *fixture) buildCrash() error {
	src := filepath.Join(f.dir, "build")
	if _, err := run(f.dir, "git", "clone", "-q", "--branch", "v1.0", f.work, src); err != nil {
		return err
	}
	f.exe = filepath.Join(f.dir, "crashy")
	note := fmt.Sprintf(`{"type":"git","name":"crashy","version":"1.0","repository":"%scrashy.git"}`, f.httpURL)
	args := []string{"-O0", "-g", "-fdebug-prefix-map=" + src + "=" + buildPrefix,
		"-Xlinker", "--package-metadata=" + note, "-o", f.exe}
	for _, c := range []string{"crash.c", "util.c", "main.c"} {
		args = append(args, filepath.Join(src, "src", "crashy", c))
	}
	if _, err := run(src, "gcc", args...); err != nil {
		return err
	}
	core, err := dumpCore(f.dir, f.exe)
	if err != nil {
		return err
	}
	f.core = core
	f.crash, err = analysis.Open(core, analysis.Options{Exe: f.exe})
	return err
}

// dumpCore runs exe until it crashes and returns its core: the kernel's
// (core_pattern "core"), or else gdb's generate-core-file.
func dumpCore(dir, exe string) (string, error) {
	cdir := filepath.Join(dir, "core")
	os.MkdirAll(cdir, 0o755)
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_CORE, &old)
	lim := syscall.Rlimit{Cur: old.Max, Max: old.Max}
	syscall.Setrlimit(syscall.RLIMIT_CORE, &lim)
	cmd := exec.Command(exe)
	cmd.Dir = cdir
	cmd.Run()
	syscall.Setrlimit(syscall.RLIMIT_CORE, &old)
	if m, _ := filepath.Glob(filepath.Join(cdir, "core*")); len(m) > 0 {
		return m[0], nil
	}
	if _, err := exec.LookPath("gdb"); err != nil {
		return "", fmt.Errorf("no kernel core (core_pattern) and no gdb to make one")
	}
	core := filepath.Join(cdir, "gdb.core")
	run(cdir, "gdb", "-batch", "-nx", "-ex", "run", "-ex", "generate-core-file "+core, exe)
	if _, err := os.Stat(core); err != nil {
		return "", fmt.Errorf("gdb made no core")
	}
	return core, nil
}

// resolve runs Resolve on the fixture's crash with a fresh cache.
func (f *fixture) resolve(t *testing.T, opt Options) *Result {
	t.Helper()
	if opt.CacheDir == "" {
		opt.CacheDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Resolve(ctx, f.crash, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
