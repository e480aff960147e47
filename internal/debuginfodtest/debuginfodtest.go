// Package debuginfodtest runs Debian's real debuginfod (elfutils 0.188) for
// tests: in a private user and network namespace, where only the test's
// own loopback exists (that debuginfod has no option to listen on
// 127.0.0.1 only), over a directory the test fills, stopped by pid when
// the test ends. A server may see directories the test process does not
// (bind mounts in its own mount namespace): a build server that still has
// the sources the test's machine lost.
package debuginfodtest

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/internal/crashbuild"
)

// inNetNSEnv marks the re-executed test binary running in its own network
// namespace.
const inNetNSEnv = "FAULTLINE_TEST_IN_NETNS"

// InNetNS re-runs the calling test in a new user and network namespace
// (unshare -rn), where only its own loopback exists, and checks that it
// passed there. It reports whether the caller is already inside and
// should do the work; outside, the caller returns.
func InNetNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv(inNetNSEnv) != "" {
		if err := loopbackUp(); err != nil {
			t.Fatalf("bringing up lo in the test's network namespace: %v", err)
		}
		return true
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatal("unshare (util-linux) is needed to run debuginfod in a private network namespace")
	}
	if out, err := exec.Command("unshare", "-rn", "true").CombinedOutput(); err != nil {
		t.Fatalf("cannot create a user+network namespace here (%v: %s): debuginfod would listen on every interface", err, out)
	}
	cmd := exec.Command("unshare", "-rn", os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), inNetNSEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in its network namespace: %v\n%s", t.Name(), err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s did not pass in its network namespace:\n%s", t.Name(), out)
	}
	t.Logf("in a private network namespace:\n%s", out)
	return false
}

// loopbackUp sets IFF_UP on lo (SIOCGIFFLAGS/SIOCSIFFLAGS, netdevice(7)).
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr [40]byte // struct ifreq: name[16], then ifr_flags (short)
	copy(ifr[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return e
	}
	flags := *(*uint16)(unsafe.Pointer(&ifr[16])) | syscall.IFF_UP
	*(*uint16)(unsafe.Pointer(&ifr[16])) = flags
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return e
	}
	return nil
}

// Server is a running debuginfod on 127.0.0.1.
type Server struct {
	URL string
	cmd *exec.Cmd
	log string
}

// Bind is a bind mount only the server sees: Dir (where the files are)
// mounted over Over (a directory that exists, maybe empty, for the test).
type Bind struct{ Dir, Over string }

// Start runs debuginfod over dir (-F: ELF files and the sources their
// DWARF names), with binds mounted in its own mount namespace first. Call
// it inside InNetNS. The server is stopped when the test ends.
func Start(t testing.TB, dir string, binds ...Bind) *Server {
	t.Helper()
	bin, err := exec.LookPath("debuginfod")
	if err != nil {
		t.Fatal("debuginfod is required (testdata/debuginfo/install.sh installs Debian's package)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // alone in this network namespace: nobody takes the port meanwhile
	logPath := filepath.Join(t.TempDir(), "debuginfod.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{bin, "-p", fmt.Sprint(port), "-d", filepath.Join(t.TempDir(), "db.sqlite"),
		"-F", "-t", "0", "-g", "0", "-c", "1", dir}
	if len(binds) > 0 {
		// unshare and sh exec in place: the pid started is debuginfod's.
		mounts := []string{"unshare", "-m", "sh", "-c",
			`while [ "$1" != -- ]; do mount --bind "$1" "$2" || exit 1; shift 2; done; shift; exec "$@"`, "sh"}
		for _, b := range binds {
			mounts = append(mounts, b.Dir, b.Over)
		}
		args = append(append(mounts, "--"), args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, log: logPath}
	t.Cleanup(func() { s.Stop(); logf.Close() })
	return s
}

// Stop ends the server (SIGTERM to its pid) and waits for it.
func (s *Server) Stop() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		s.cmd.Wait()
	}
}

// WaitFor polls path until it answers 200: the server has indexed the file.
func (s *Server) WaitFor(t testing.TB, path string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		resp, err := http.Get(s.URL + path)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(s.log)
			t.Fatalf("debuginfod did not serve %s within 90s; its log:\n%s", path, log)
		}
	}
}

// SourcesAway is a program built and crashed here (crashbuild) whose
// sources were then moved away: its DW_AT_comp_dir/src is an empty
// directory on this machine, and a debuginfod over a copy of the
// executable, which still sees the sources there, serves them.
type SourcesAway struct {
	crashbuild.Program
	Server  *Server
	BuildID string // hex
	// Fetched is where a client of the environment StartSourcesAway sets
	// keeps the fetched source (elfutils' cache layout).
	Fetched string
}

// StartSourcesAway builds the program, moves its sources away, starts the
// server and points the environment's debuginfod client at it
// (DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH: a new cache) for the test; it
// returns once the server serves the source. Call it inside InNetNS.
func StartSourcesAway(t *testing.T) SourcesAway {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := crashbuild.Build(t, filepath.Join(dir, "build"))
	o, err := object.OpenObject(p.Exe)
	if err != nil {
		t.Fatal(err)
	}
	id := hex.EncodeToString(o.BuildID())
	o.Close()
	if id == "" {
		t.Fatalf("%s has no build-id", p.Exe)
	}
	srv, away := filepath.Join(dir, "served"), filepath.Join(dir, "away")
	for _, d := range []string{srv, away} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.ReadFile(p.Exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv, "crash"), exe, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Dir(p.Source)
	if err := os.Rename(src, filepath.Join(away, "src")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	s := Start(t, srv, Bind{Dir: filepath.Join(away, "src"), Over: src})
	s.WaitFor(t, "/buildid/"+id+"/source"+p.Source)
	if _, err := os.Stat(p.Source); err == nil {
		t.Fatalf("%s is still on this machine", p.Source)
	}
	cache := filepath.Join(dir, "debuginfod-cache")
	t.Setenv("DEBUGINFOD_URLS", s.URL)
	t.Setenv("DEBUGINFOD_CACHE_PATH", cache)
	fetched := filepath.Join(cache, id, "source"+strings.ReplaceAll(p.Source, "/", "#"))
	return SourcesAway{Program: p, Server: s, BuildID: id, Fetched: fetched}
}

// CheckFetched checks that the fetched copy holds the program's source
// and is read-only.
func (s SourcesAway) CheckFetched(t testing.TB) {
	t.Helper()
	if b, err := os.ReadFile(s.Fetched); err != nil || string(b) != crashbuild.CrashSource {
		t.Errorf("fetched file: %q, %v", b, err)
	}
	if fi, err := os.Stat(s.Fetched); err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("fetched file %s: %v, %v: want read-only", s.Fetched, fi, err)
	}
}

// Counter is a reverse proxy on 127.0.0.1 in front of a Server that
// counts the requests it forwards: point DEBUGINFOD_URLS at URL to count
// what a client asks the server.
type Counter struct {
	URL string

	mu    sync.Mutex
	paths []string
}

// Count starts a counting proxy in front of s, stopped when the test ends.
func (s *Server) Count(t testing.TB) *Counter {
	t.Helper()
	target, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := &Counter{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.paths = append(c.paths, r.URL.Path)
		c.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	c.URL = hs.URL
	return c
}

// Requests are the paths asked so far, in order.
func (c *Counter) Requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.paths...)
}
