package gitsrc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/internal/crashbuild"
)

// TestVerifyWrongTag (issue 22 item 4): the fixture's program was built
// from v1.0. The package note's v1.0 checkout verifies (every frame file
// there, every line inside it); a rule naming main, where util.c has been
// renamed, is a problem that names the missing file, the component says
// unverified, and so do its upstream reviews.
func TestVerifyWrongTag(t *testing.T) {
	f := getFixture(t)
	res := f.resolve(t, Options{Review: ReviewOptions{Disabled: true}})
	c := componentNamed(t, res, "crashy")
	if v := c.Verification; v == nil || !v.Verified || v.Files < 3 || v.MD5 != 0 {
		t.Errorf("v1.0: verification %+v; want verified, 3 frame files, no MD5s (gcc)", v)
	}
	cfg, err := ParseConfig([]byte(`{"components": [{"module": "crashy$", "name": "crashy", "repo": "` + f.httpURL + `crashy.git", "revision": "main"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res = f.resolve(t, Options{Config: cfg})
	c = componentNamed(t, res, "crashy")
	if v := c.Verification; v == nil || v.Verified || len(v.Mismatches) != 1 || !strings.Contains(v.Mismatches[0], "util.c") {
		t.Fatalf("main: verification %+v; want util.c named as missing", v)
	}
	if !problemFor(res, f.exe, "does not match the binary") || !problemFor(res, f.exe, "unverified") {
		t.Errorf("no problem says the checkout is unverified: %+v", res.Problems)
	}
	if len(res.Upstream) == 0 {
		t.Fatalf("no upstream review (problems %+v)", res.Problems)
	}
	for _, u := range res.Upstream {
		if !u.Unverified {
			t.Errorf("review of %s does not say it is unverified", u.Path)
		}
	}
}

// TestVerifyMD5LocalPatch: a program compiled with clang -gdwarf-5 from a
// repository's v1.0 carries the MD5 of src/crash.c. v1.1 changes a
// comment only (same lines): a rule naming v1.1 is caught by the MD5 alone;
// v1.0 verifies by MD5.
func TestVerifyMD5LocalPatch(t *testing.T) {
	if _, err := exec.LookPath("clang"); err != nil {
		t.Fatal("clang is needed (apt-get install clang)")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		if _, err := run(dir, "git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join(dir, "src", "crash.c")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(crashbuild.CrashSource), 0o644); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	git("add", "src/crash.c")
	git("commit", "-q", "-m", "crash")
	git("tag", "v1.0")
	exe := filepath.Join(dir, "crash")
	cc := exec.Command("clang", "-gdwarf-5", "-O0", "-o", exe, "src/crash.c")
	cc.Dir = dir
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	patched := strings.Replace(crashbuild.CrashSource, "int main(void) {", "int main(void) { /* patched */", 1)
	if err := os.WriteFile(src, []byte(patched), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-q", "-am", "comment")
	git("tag", "v1.1")
	c, err := analysis.Open(crashWithArgs(t, t.TempDir(), exe), analysis.Options{Exe: exe, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	verify := func(rev string) *Verification {
		cfg, err := ParseConfig([]byte(`{"components": [{"module": "/crash$", "name": "crash", "repo": "` + dir + `", "revision": "` + rev + `"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Resolve(t.Context(), c, Options{Config: cfg, CacheDir: t.TempDir(), Offline: true, Review: ReviewOptions{Disabled: true}})
		if err != nil {
			t.Fatal(err)
		}
		return componentNamed(t, res, "crash").Verification
	}
	if v := verify("v1.0"); v == nil || !v.Verified || v.MD5 != 1 {
		t.Errorf("v1.0: %+v; want verified by one MD5", v)
	}
	if v := verify("v1.1"); v == nil || v.Verified || len(v.Mismatches) != 1 || !strings.Contains(v.Mismatches[0], "MD5") {
		t.Errorf("v1.1: %+v; want an MD5 mismatch of src/crash.c", v)
	}
}
