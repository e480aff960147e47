package gitsrc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
)

// crashWithArgs runs exe with args in dir until it crashes and returns the
// core: the kernel's (core_pattern "core") or gdb's generate-core-file.
func crashWithArgs(t *testing.T, dir, exe string, args ...string) string {
	t.Helper()
	cdir, err := os.MkdirTemp(dir, "core-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", append([]string{"-c", `ulimit -c unlimited; exec "$@"`, "sh", exe}, args...)...)
	cmd.Dir = cdir
	_ = cmd.Run()
	if m, _ := filepath.Glob(filepath.Join(cdir, "core*")); len(m) > 0 {
		return m[0]
	}
	core := filepath.Join(cdir, "gdb.core")
	gdb := append([]string{"-batch", "-nx", "-ex", "run", "-ex", "generate-core-file " + core, "--args", exe}, args...)
	if out, err := exec.Command("gdb", gdb...).CombinedOutput(); err != nil {
		t.Fatalf("no core from %s %v: %v\n%s", exe, args, err, out)
	}
	return core
}

// TestDebianLibrariesIdentified builds programs against this machine's
// zlib1g, libcurl4, libexpat1 and libstdc++6 (gcc-12), crashes them inside
// each library and runs
// the inventory on each core with no configuration, offline: each library
// is named with its Debian package, its upstream repository and the tag of
// its upstream release (from merged-/usr paths: the core maps /usr/lib,
// dpkg lists /lib). The program itself, built outside any repository, is
// a problem that says nothing identifies it.
func TestDebianLibrariesIdentified(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/debianlibs/crashlibs.c")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crashlibs.c"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "crashlibs")
	if out, err := exec.Command("gcc", "-g", "-O1", "-o", exe, filepath.Join(dir, "crashlibs.c"), "-lz", "-lcurl", "-lexpat").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s (apt-get install zlib1g-dev libcurl4-openssl-dev libexpat1-dev)", err, out)
	}
	cxxSrc, err := os.ReadFile("testdata/debianlibs/crashcxx.cc")
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, dir, "crashcxx.cc", cxxSrc) // outside any repository that would claim it
	cxx := filepath.Join(dir, "crashcxx")
	if out, err := exec.Command("g++", "-g", "-o", cxx, filepath.Join(dir, "crashcxx.cc")).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		arg, name, pkg, source, repo string
		tag                          func(upstream string) string
	}{
		{"zlib", "zlib", "zlib1g", "zlib", "https://github.com/madler/zlib", func(v string) string { return "v" + v }},
		{"curl", "curl", "libcurl4", "curl", "https://github.com/curl/curl", func(v string) string { return "curl-" + strings.ReplaceAll(v, ".", "_") }},
		{"expat", "expat", "libexpat1", "expat", "https://github.com/libexpat/libexpat", func(v string) string { return "R_" + strings.ReplaceAll(v, ".", "_") }},
		{"libstdc++", "gcc", "libstdc++6", "gcc-", "https://gcc.gnu.org/git/gcc.git", func(v string) string { return "releases/gcc-" + v }},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			prog := exe
			if tc.arg == "libstdc++" {
				prog = cxx
			}
			core := crashWithArgs(t, dir, prog, tc.arg)
			c, err := analysis.Open(core, analysis.Options{Exe: prog, Offline: true})
			if err != nil {
				t.Fatal(err)
			}
			res := resolveOffline(t, c)
			comp := componentNamed(t, res, tc.name)
			up := gitsrctest.DpkgUpstream(t, tc.pkg)
			if comp.Repo != tc.repo || comp.Revision != tc.tag(up) || comp.Branch == "" {
				t.Errorf("%s: repo %s revision %s branch %q; want %s %s", tc.name, comp.Repo, comp.Revision, comp.Branch, tc.repo, tc.tag(up))
			}
			p := comp.Package
			if p == nil || p.Manager != "dpkg" || p.Name != tc.pkg || !strings.HasPrefix(p.Source, tc.source) || p.Upstream != up {
				t.Errorf("%s: package %+v; want dpkg %s (source %s), upstream %s", tc.name, p, tc.pkg, tc.source, up)
			}
			if !strings.HasPrefix(comp.Modules[0], "/usr/lib/") {
				t.Errorf("%s: module %s is not the merged-/usr path the core maps", tc.name, comp.Modules[0])
			}
			if !strings.Contains(comp.DebugInfo, tc.pkg+"-dbgsym") || !strings.Contains(comp.DebugInfo, "debuginfod.debian.net") {
				t.Errorf("%s: no step to map its frames: %q", tc.name, comp.DebugInfo)
			}
			if !hasFact(comp, "repository", "built-in registry") || !hasFact(comp, "package", "dpkg") {
				t.Errorf("%s: facts without their origins: %+v", tc.name, comp.Facts)
			}
			if !problemFor(res, prog, "nothing identifies "+filepath.Base(prog)) {
				t.Errorf("no problem says nothing identifies the program: %+v", res.Problems)
			}
		})
	}
}

func resolveOffline(t *testing.T, c *analysis.Crash) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Resolve(ctx, c, Options{CacheDir: t.TempDir(), Offline: true, Review: ReviewOptions{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func componentNamed(t *testing.T, r *Result, name string) Component {
	t.Helper()
	for _, c := range r.Components {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no component %s among %+v (problems %+v)", name, r.Components, r.Problems)
	return Component{}
}

func hasFact(c Component, field, origin string) bool {
	for _, f := range c.Facts {
		if f.Field == field && strings.Contains(f.Origin, origin) {
			return true
		}
	}
	return false
}

func problemFor(r *Result, module, text string) bool {
	for _, p := range r.Problems {
		if p.Module == module && strings.Contains(p.Message, text) {
			return true
		}
	}
	return false
}

// TestRuleBareReleaseFallsBack: a rule naming the release without the
// tag's "v" ("1.0" for the tag v1.0) resolves through the tag conventions.
func TestRuleBareReleaseFallsBack(t *testing.T) {
	f := getFixture(t)
	cfg, err := ParseConfig([]byte(`{"components": [{"module": "crashy$", "name": "crashy", "repo": "` + f.httpURL + `crashy.git", "revision": "1.0"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res := f.resolve(t, Options{Config: cfg, Review: ReviewOptions{Disabled: true}})
	c := componentNamed(t, res, "crashy")
	if c.Revision != "v1.0" || c.Commit != f.rev["v1.0"] || c.Origin != "config" {
		t.Errorf("component %+v; want v1.0 (%s) from the rule", c, f.rev["v1.0"])
	}
	for _, p := range res.Problems {
		t.Errorf("problem: %+v", p)
	}
}

// putFile writes data to root/rel, making its directories.
func putFile(t *testing.T, root, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUnpackagedLibraryIdentified: a program crashed in a zlib that no
// package database knows (a copy of Debian's libz in the program's own
// lib directory, found through its rpath, as a self-built zlib under /opt
// would be): the registry names it from the module file itself — its real
// file name (libz.so.1.2.13) or, when the name carries no release, its
// version string — each fact saying so.
func TestUnpackagedLibraryIdentified(t *testing.T) {
	real, err := filepath.EvalSymlinks("/usr/lib/x86_64-linux-gnu/libz.so.1")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	up := gitsrctest.DpkgUpstream(t, "zlib1g")
	for _, tc := range []struct{ file, origin string }{
		{filepath.Base(real), "file name " + filepath.Base(real)},
		{"libz.so.1", "version string"},
	} {
		dir := t.TempDir()
		putFile(t, dir, "lib/"+tc.file, lib)
		if tc.file != "libz.so.1" {
			if err := os.Symlink(tc.file, filepath.Join(dir, "lib", "libz.so.1")); err != nil {
				t.Fatal(err)
			}
		}
		putFile(t, dir, "crc.c", []byte("#include <stdint.h>\n#include <zlib.h>\nint main(void) { return (int)crc32(0, (const Bytef *)(uintptr_t)16, 64); }\n"))
		exe := filepath.Join(dir, "crc")
		lib := filepath.Join(dir, "lib")
		if out, err := exec.Command("gcc", "-g", "-o", exe, filepath.Join(dir, "crc.c"), "-L"+lib, "-l:libz.so.1", "-Wl,-rpath,"+lib).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		c, err := analysis.Open(crashWithArgs(t, dir, exe), analysis.Options{Exe: exe, Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		comp := componentNamed(t, resolveOffline(t, c), "zlib")
		if comp.Repo != "https://github.com/madler/zlib" || comp.Revision != "v"+up || comp.Origin != "registry" || comp.Package != nil {
			t.Errorf("%s: %s @ %s from %s (package %+v); want madler/zlib v%s from the registry alone", tc.file, comp.Repo, comp.Revision, comp.Origin, comp.Package, up)
		}
		if !hasFact(comp, "version", tc.origin) {
			t.Errorf("%s: facts %+v; want the version from %s", tc.file, comp.Facts, tc.origin)
		}
	}
}

// TestNothingToIdentifyIsAProblem: a crash whose frames name no module (a
// log of Python frames) gives no component and says why.
func TestNothingToIdentifyIsAProblem(t *testing.T) {
	c := &analysis.Crash{Threads: []analysis.Thread{{ID: 1, Crashed: true,
		Frames: []analysis.Frame{{Function: "train_step", File: "train.py", Line: 3, Language: "python"}}}}}
	res := resolveOffline(t, c)
	if len(res.Components) != 0 || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, "nothing to identify") {
		t.Errorf("components %+v problems %+v", res.Components, res.Problems)
	}
}
