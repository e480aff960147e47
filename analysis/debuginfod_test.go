package analysis_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/debuginfo"
)

// inNetNSEnv marks the re-executed test binary running in its own network
// namespace.
const inNetNSEnv = "FAULTLINE_TEST_IN_NETNS"

// runInNetNS re-runs the named test in a new user and network namespace
// (unshare -rn), where only its own loopback exists: Debian's debuginfod
// 0.188 has no option to listen on 127.0.0.1 only, so the test gives it a
// network nobody else can reach. It reports whether the caller is already
// inside (and should do the work).
func runInNetNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv(inNetNSEnv) != "" {
		if err := loopbackUp(); err != nil {
			t.Fatalf("bringing up lo in the test's network namespace: %v", err)
		}
		return true
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) is needed to run debuginfod in a private network namespace")
	}
	if out, err := exec.Command("unshare", "-rn", "true").CombinedOutput(); err != nil {
		t.Skipf("cannot create a user+network namespace here (%v: %s): debuginfod would listen on every interface", err, out)
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

// debuginfodServer is Debian's debuginfod over a directory, on 127.0.0.1.
type debuginfodServer struct {
	url string
	cmd *exec.Cmd
	log string
}

func startDebuginfod(t *testing.T, dir string) *debuginfodServer {
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
	cmd := exec.Command(bin, "-p", fmt.Sprint(port), "-d", filepath.Join(t.TempDir(), "db.sqlite"),
		"-F", "-t", "0", "-g", "0", "-c", "1", dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &debuginfodServer{url: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, log: logPath}
	t.Cleanup(func() { s.stop(); logf.Close() })
	return s
}

func (s *debuginfodServer) stop() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		s.cmd.Wait()
	}
}

// waitFor polls url until it answers 200: the server has indexed the file.
func (s *debuginfodServer) waitFor(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		resp, err := http.Get(s.url + path)
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

func buildIDOf(t *testing.T, path string) string {
	t.Helper()
	o, err := debuginfo.OpenObject(path)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if len(o.BuildID()) == 0 {
		t.Fatalf("%s has no build-id", path)
	}
	return hex.EncodeToString(o.BuildID())
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestDebuginfodServer: Debian's debuginfod, serving a directory with the
// stripped test program and its debug file, gives faultline both the
// executable (the core names a path that no longer exists) and its DWARF;
// the frames equal gdb's with the plain build. A second open with the
// server stopped is served from the cache. /source is checked on a program
// compiled here (debuginfod serves sources it finds on disk).
func TestDebuginfodServer(t *testing.T) {
	if !runInNetNS(t) {
		return
	}
	checkLookupLibs(t)
	srv := t.TempDir()
	copyFile(t, lookupFile("bin", "stripped", "layers"), filepath.Join(srv, "layers"))
	copyFile(t, lookupFile("debug", "layers.debug"), filepath.Join(srv, "layers.debug"))
	src := filepath.Join(srv, "hello.c")
	os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644)
	if out, err := exec.Command("gcc", "-g", "-o", filepath.Join(srv, "hello"), src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	id := buildIDOf(t, filepath.Join(srv, "layers"))
	helloID := buildIDOf(t, filepath.Join(srv, "hello"))

	s := startDebuginfod(t, srv)
	s.waitFor(t, "/buildid/"+id+"/debuginfo")
	s.waitFor(t, "/buildid/"+id+"/executable")
	s.waitFor(t, "/buildid/"+helloID+"/source"+src)

	want := plainFrames(t)
	core := lookupCore(t, "stripped")
	cache := t.TempDir()
	opt := analysis.Options{DebuginfodURLs: []string{s.url}, DebuginfodCache: cache, DebuginfodTimeout: 20 * time.Second}
	check := func(what string) {
		t.Helper()
		c, err := analysis.Open(core, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := frameNames(c.Threads[0]); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: frames\n  %s\nwant (plain build)\n  %s\nproblems %+v", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "), c.Problems)
		}
		var exe *analysis.Module
		for i := range c.Modules {
			if hex.EncodeToString(nil) != c.Modules[i].BuildID && c.Modules[i].BuildID == id {
				exe = &c.Modules[i]
			}
		}
		switch {
		case exe == nil:
			t.Errorf("%s: no module with build-id %s: %+v", what, id, c.Modules)
		case exe.File != filepath.Join(cache, id, "executable") || exe.DebugFile != filepath.Join(cache, id, "debuginfo"):
			t.Errorf("%s: executable from %q, debug file %q: want both from the cache %s", what, exe.File, exe.DebugFile, cache)
		case exe.Symbols != "dwarf":
			t.Errorf("%s: symbols %q", what, exe.Symbols)
		}
	}
	check("through debuginfod")

	d := &debuginfo.Debuginfod{URLs: []string{s.url}, CacheDir: cache}
	path, err := d.Fetch(context.Background(), mustUnhex(t, helloID), debuginfo.KindSource, src)
	if err != nil {
		t.Fatalf("source: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "int main(void) { return 0; }\n" {
		t.Errorf("source from debuginfod: %q", got)
	}

	s.stop()
	if resp, err := http.Get(s.url + "/metrics"); err == nil {
		resp.Body.Close()
		t.Fatal("debuginfod still answers after it was stopped")
	}
	check("from the cache, server stopped")
}

func mustUnhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDebuginfodDownServer: a server that accepts connections and never
// answers costs one timeout for the whole open, not one per module, and
// is reported once.
func TestDebuginfodDownServer(t *testing.T) {
	checkLookupLibs(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never answered
		}
	}()
	core := lookupCore(t, "stripped")
	timeout := 2 * time.Second
	opt := analysis.Options{Exe: lookupFile("bin", "stripped", "layers"), DebuginfodURLs: []string{"http://" + l.Addr().String()},
		DebuginfodCache: t.TempDir(), DebuginfodTimeout: timeout}
	offline := opt
	offline.Offline = true
	start := time.Now()
	if _, err := analysis.Open(core, offline); err != nil {
		t.Fatal(err)
	}
	base := time.Since(start)
	start = time.Now()
	c, err := analysis.Open(core, opt)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start) - base
	t.Logf("a silent server made the open %v longer (timeout %v)", took, timeout)
	if took > timeout*3/2 {
		t.Errorf("open took %v longer with a silent server and a %v timeout: more than one timeout", took, timeout)
	}
	n := 0
	for _, p := range c.Problems {
		if strings.Contains(p.Message, l.Addr().String()) && strings.Contains(p.Message, "not asked again") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d problems name the silent server, want 1: %+v", n, c.Problems)
	}
	for _, p := range c.Problems {
		if strings.Contains(p.Message, "no debug info") && !strings.Contains(p.Message, "--debug-dir") {
			t.Errorf("missing-debug problem without a way to get it: %q", p.Message)
		}
	}
}
