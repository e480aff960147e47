package gitsrc

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
)

// TestFixFromChangelog: on a core crashed in Debian's libcurl, --fix with
// a CVE id the changelog names on top of 7.88.1 is included, "backported
// in" that upload; a CVE no changelog names is unknown, never "not included".
func TestFixFromChangelog(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/debianlibs/crashlibs.c")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "crashlibs.c"), src, 0o644)
	exe := filepath.Join(dir, "crashlibs")
	if out, err := exec.Command("gcc", "-g", "-o", exe, filepath.Join(dir, "crashlibs.c"), "-lz", "-lcurl", "-lexpat").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	c, err := analysis.Open(crashWithArgs(t, dir, exe, "curl"), analysis.Options{Exe: exe, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	comp := componentNamed(t, resolveOffline(t, c), "curl")
	if len(comp.Backports) == 0 {
		t.Fatalf("curl: no backports: %+v", comp)
	}
	want := comp.Backports[len(comp.Backports)-1]
	fix := func(id string) *FixCheck {
		res, err := Resolve(t.Context(), c, Options{CacheDir: t.TempDir(), Offline: true, Fix: strings.ToLower(id), Review: ReviewOptions{Disabled: true}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Fix
	}
	fc := fix(want.CVEs[0])
	if fc == nil || !fc.Included || !fc.Known || fc.Backport == nil || fc.Backport.Version != want.Version ||
		!strings.Contains(fc.Reason, "backported in libcurl4 "+want.Version) {
		t.Errorf("--fix %s: %+v; want included, backported in %s", want.CVEs[0], fc, want.Version)
	}
	if fc := fix("CVE-1999-0001"); fc == nil || fc.Known || fc.Included {
		t.Errorf("--fix of a CVE no changelog names: %+v; want unknown", fc)
	}
}

// TestReviewMarksBackport: the fixture's program installed as a Debian
// package (1.0-2) whose changelog quotes the subject of upstream's fix.
// The review lists the fix after v1.0 as backported in 1.0-2, and --fix
// with its hash answers included although v1.0's history lacks it.
func TestReviewMarksBackport(t *testing.T) {
	f := getFixture(t)
	root := t.TempDir()
	put := func(rel string, data []byte) { putFile(t, root, rel, data) }
	put("var/lib/dpkg/status", []byte("Package: crashy\nStatus: install ok installed\nVersion: 1.0-2\n\n"))
	put("var/lib/dpkg/info/crashy.list", []byte(f.exe+"\n"))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("crashy (1.0-2) unstable; urgency=high\n\n  * Fix NULL dereference in parse_record, from upstream\n    (a record missing from the table crashed).\n\n" +
		" -- Dev <dev@example.com>  Mon, 01 Apr 2024 12:00:00 +0000\n\ncrashy (1.0-1) unstable; urgency=low\n\n  * Initial release.\n\n" +
		" -- Dev <dev@example.com>  Fri, 01 Mar 2024 12:00:00 +0000\n"))
	zw.Close()
	put("usr/share/doc/crashy/changelog.Debian.gz", gz.Bytes())
	fixHash := f.rev["Fix NULL dereference in parse_record"]
	res := f.resolve(t, Options{Sysroot: root, Fix: fixHash})
	rv := findReview(t, res, "src/crashy/crash.c")
	for _, rc := range rv.Commits {
		if want := map[bool]string{true: "1.0-2", false: ""}[rc.Commit == fixHash]; rc.Backported != want {
			t.Errorf("%s %q: backported %q, want %q", rc.Commit[:8], rc.Subject, rc.Backported, want)
		}
	}
	if fc := res.Fix; fc == nil || !fc.Included || !fc.Known || !strings.Contains(fc.Reason, "backported in crashy 1.0-2") {
		t.Errorf("--fix: %+v; want included, backported in 1.0-2", fc)
	}
}
