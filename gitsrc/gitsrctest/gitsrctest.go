// Package gitsrctest builds the git fixture that the tests of gitsrc and of
// the language server share: testdata/gitsrc/mkrepo.sh's repository served
// by a real `git http-backend` (behind net/http/cgi) and a real `git
// daemon`, both on 127.0.0.1, and a crash program compiled from a checkout
// of its v1.0 tag with DWARF paths moved under a long fake build prefix
// (-fdebug-prefix-map) and a .note.package naming the HTTP repository
// (ld --package-metadata), with its core dump.
//
// It needs git and gcc, and gdb where the kernel writes no core file.
package gitsrctest

import (
	"bytes"
	"fmt"
	"net"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
)

// BuildPrefix is the prefix the crash program's DWARF file names are under,
// the kind of prefix ROCm packages are built under.
const BuildPrefix = "/longer_pathname_so_that_rpms_can_support_packaging_the_debug_info_for_all_os_profiles/src/crashy"

// Fixture is the repository, its servers and the crash program.
type Fixture struct {
	// Dir holds everything below; Close removes it.
	Dir string
	// Work is a working clone with the whole history.
	Work string
	// HTTPURL is "http://127.0.0.1:PORT/" serving crashy.git (fetch by
	// hash allowed) and strict.git (refused); GitURL the same over git://.
	HTTPURL, GitURL string
	// Exe is the crash program, built from v1.0; Core its core dump.
	Exe, Core string
	// Rev maps commit subjects (and "v1.0") to full commit hashes.
	Rev map[string]string
	// Crash is the core opened with analysis.Open.
	Crash *analysis.Crash

	cleanups []func()
}

// New builds the fixture under a new temporary directory. repoRoot is the
// repository's root (where testdata/gitsrc/mkrepo.sh lives). On error the
// partial fixture is already cleaned up.
func New(repoRoot string) (f *Fixture, err error) {
	for _, tool := range []string{"git", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is needed (apt-get install git gcc gdb)", tool)
		}
	}
	dir, err := os.MkdirTemp("", "gitsrc-fixture-")
	if err != nil {
		return nil, err
	}
	f = &Fixture{Dir: dir, Work: filepath.Join(dir, "work"), Rev: map[string]string{}}
	defer func() {
		if err != nil {
			f.Close()
			f = nil
		}
	}()
	script, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "gitsrc", "mkrepo.sh"))
	if err != nil {
		return f, err
	}
	if _, err := Run(dir, "bash", script, dir); err != nil {
		return f, err
	}
	log, err := Run(f.Work, "git", "log", "--format=%H %s", "main")
	if err != nil {
		return f, err
	}
	for _, l := range strings.Split(log, "\n") {
		h, s, _ := strings.Cut(l, " ")
		f.Rev[s] = h
	}
	if f.Rev["v1.0"], err = Run(f.Work, "git", "rev-parse", "v1.0^{commit}"); err != nil {
		return f, err
	}
	if err := f.serve(); err != nil {
		return f, err
	}
	if err := f.buildCrash(); err != nil {
		return f, err
	}
	return f, nil
}

// Close stops the servers and removes Dir.
func (f *Fixture) Close() {
	if f == nil {
		return
	}
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	f.cleanups = nil
	os.RemoveAll(f.Dir)
}

// Run runs a command in dir and returns its trimmed combined output.
func Run(dir string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return strings.TrimSpace(out.String()), nil
}

// serve starts git http-backend (CGI) and git daemon on 127.0.0.1.
func (f *Fixture) serve() error {
	execPath, err := Run("", "git", "--exec-path")
	if err != nil {
		return err
	}
	srv := filepath.Join(f.Dir, "srv")
	h := &cgi.Handler{
		Path: filepath.Join(execPath, "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + srv, "GIT_HTTP_EXPORT_ALL=1"},
	}
	hs := httptest.NewServer(h)
	f.cleanups = append(f.cleanups, hs.Close)
	f.HTTPURL = hs.URL + "/"

	url, stop, err := StartDaemon(srv)
	if err != nil {
		return err
	}
	f.cleanups = append(f.cleanups, stop)
	f.GitURL = url
	return nil
}

// StartDaemon serves the repositories under root with git daemon on
// 127.0.0.1 and returns its base URL ("git://127.0.0.1:PORT/") and the
// function that stops it.
func StartDaemon(root string) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	d := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--base-path="+root,
		"--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), root)
	var dlog bytes.Buffer
	d.Stdout, d.Stderr = &dlog, &dlog
	// Its own process group: the daemon forks a child per connection, and
	// stopping ends the group (only processes this function started).
	d.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	d.WaitDelay = 5 * time.Second
	if err := d.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		syscall.Kill(-d.Process.Pid, syscall.SIGTERM)
		d.Wait()
	}
	// Wait until the daemon answers (or gives up).
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return fmt.Sprintf("git://127.0.0.1:%d/", port), stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("git daemon did not listen on %d: %v\n%s", port, err, dlog.String())
		}
		time.Sleep(20 * time.Millisecond) // poll the condition: the daemon accepts
	}
}

// buildCrash compiles the crash program from a checkout of v1.0 and dumps its core.
func (f *Fixture) buildCrash() error {
	src := filepath.Join(f.Dir, "build")
	if _, err := Run(f.Dir, "git", "clone", "-q", "--branch", "v1.0", f.Work, src); err != nil {
		return err
	}
	f.Exe = filepath.Join(f.Dir, "crashy")
	note := fmt.Sprintf(`{"type":"git","name":"crashy","version":"1.0","repository":"%scrashy.git"}`, f.HTTPURL)
	args := []string{"-O0", "-g", "-fdebug-prefix-map=" + src + "=" + BuildPrefix,
		"-Xlinker", "--package-metadata=" + note, "-o", f.Exe}
	for _, c := range []string{"crash.c", "util.c", "main.c"} {
		args = append(args, filepath.Join(src, "src", "crashy", c))
	}
	if _, err := Run(src, "gcc", args...); err != nil {
		return err
	}
	core, err := DumpCore(f.Dir, f.Exe)
	if err != nil {
		return err
	}
	f.Core = core
	f.Crash, err = analysis.Open(core, analysis.Options{Exe: f.Exe})
	return err
}

// DumpCore runs exe in dir/core until it crashes and returns its core: the
// kernel's (core_pattern "core"), or else gdb's generate-core-file.
func DumpCore(dir, exe string) (string, error) {
	return DumpCoreArgs(dir, exe)
}

// DumpCoreArgs is DumpCore with arguments for exe.
func DumpCoreArgs(dir, exe string, args ...string) (string, error) {
	cdir := filepath.Join(dir, "core")
	os.MkdirAll(cdir, 0o755)
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_CORE, &old)
	lim := syscall.Rlimit{Cur: old.Max, Max: old.Max}
	syscall.Setrlimit(syscall.RLIMIT_CORE, &lim)
	cmd := exec.Command(exe, args...)
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
	Run(cdir, "gdb", append([]string{"-batch", "-nx", "-ex", "run", "-ex", "generate-core-file " + core, "--args", exe}, args...)...)
	if _, err := os.Stat(core); err != nil {
		return "", fmt.Errorf("gdb made no core")
	}
	return core, nil
}

// UseMirror makes the test's git configuration (GIT_CONFIG_GLOBAL, no
// system file) rewrite upstream (a URL prefix such as
// "https://github.com/madler/") to mirror, as a site with a mirror writes
// url.<base>.insteadOf: the fetches of the test go to its git daemon.
func UseMirror(t testing.TB, mirror, upstream string) {
	t.Helper()
	gitconfig := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(gitconfig, []byte("[url \""+mirror+"\"]\n\tinsteadOf = "+upstream+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", gitconfig)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}
