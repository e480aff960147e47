package analysis_test

import (
	"context"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/internal/debuginfodtest"
)

func buildIDOf(t *testing.T, path string) string {
	t.Helper()
	o, err := object.OpenObject(path)
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
	if !debuginfodtest.InNetNS(t) {
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

	s := debuginfodtest.Start(t, srv)
	s.WaitFor(t, "/buildid/"+id+"/debuginfo")
	s.WaitFor(t, "/buildid/"+id+"/executable")
	s.WaitFor(t, "/buildid/"+helloID+"/source"+src)

	want := plainFrames(t)
	core := lookupCore(t, "stripped")
	cache := t.TempDir()
	opt := analysis.Options{DebuginfodURLs: []string{s.URL}, DebuginfodCache: cache, DebuginfodTimeout: 20 * time.Second}
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

	d := &debugfile.Debuginfod{URLs: []string{s.URL}, CacheDir: cache}
	path, err := d.Fetch(context.Background(), mustUnhex(t, helloID), debugfile.KindSource, src)
	if err != nil {
		t.Fatalf("source: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "int main(void) { return 0; }\n" {
		t.Errorf("source from debuginfod: %q", got)
	}

	s.Stop()
	if resp, err := http.Get(s.URL + "/metrics"); err == nil {
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
