package gitsrc

import (
	"bytes"
	"compress/gzip"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
)

// TestVerifyZlibWrongTag (issue 22 item 4, on zlib's real-release
// history): libz.so.1.2.11 (gcc -g -O2: no DWARF 5 MD5s) crashed in
// inflate(). With no configuration the v1.2.11 checkout verifies. A rule
// naming v1.2.13, or 1.2.13 without the "v", resolves to v1.2.13 and is
// caught: every file is there and every line is inside its file, but the
// binary declares inflate() (DW_AT_decl_line) on a line of inflate.c
// that, at v1.2.13, does not declare it. The problem says so and the
// review says it is unverified.
func TestVerifyZlibWrongTag(t *testing.T) {
	z, err := gitsrctest.Zlib()
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := gitsrctest.StartDaemon(filepath.Join(z.Dir, "srv"))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	gitsrctest.UseMirror(t, url, "https://github.com/madler/")
	c, err := analysis.Open(z.Core, analysis.Options{Exe: z.Exe, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	resolve := func(rules string) *Result {
		var cfg *Config
		if rules != "" {
			if cfg, err = ParseConfig([]byte(rules)); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		res, err := Resolve(ctx, c, Options{Config: cfg, CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	right := componentNamed(t, resolve(""), "zlib")
	if v := right.Verification; right.Revision != "v1.2.11" || v == nil || !v.Verified || v.Functions == 0 {
		t.Fatalf("no config: %s, verification %+v; want v1.2.11 verified by its functions' declarations", right.Revision, v)
	}
	for _, rev := range []string{"v1.2.13", "1.2.13"} {
		res := resolve(`{"components": [{"module": "libz", "name": "zlib", "repo": "https://github.com/madler/zlib", "revision": "` + rev + `"}]}`)
		comp := componentNamed(t, res, "zlib")
		v := comp.Verification
		if comp.Revision != "v1.2.13" || v == nil || v.Verified || !strings.Contains(strings.Join(v.Mismatches, ";"), "inflate") {
			t.Errorf("rule %s: %s, verification %+v; want v1.2.13 caught at inflate()", rev, comp.Revision, v)
		}
		if !problemFor(res, z.Lib, "does not match the binary") {
			t.Errorf("rule %s: problems %+v", rev, res.Problems)
		}
		for _, u := range res.Upstream {
			if !u.Unverified {
				t.Errorf("rule %s: the review of %s does not say it is unverified", rev, u.Path)
			}
		}
	}
}

// TestZlibBackportedInDebian (issue 22 item 5's backports, on zlib's
// real-release history): the crashed libz.so.1.2.11 installed as Debian's
// zlib1g 1:1.2.11.dfsg-2+deb11u2, whose real changelog (from Debian's
// source package) quotes the subjects of upstream's two inflate() fixes.
// With no configuration the review since v1.2.11 marks exactly those two
// as backported in that upload, and --fix answers the fix's commit and its
// CVE id as included, though v1.2.11's history lacks them.
func TestZlibBackportedInDebian(t *testing.T) {
	z, err := gitsrctest.Zlib()
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := gitsrctest.StartDaemon(filepath.Join(z.Dir, "srv"))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	gitsrctest.UseMirror(t, url, "https://github.com/madler/")
	patches, err := gitsrctest.DebianFile{Package: "zlib", Name: "zlib_1.2.11.dfsg-2+deb11u2.debian.tar.xz",
		SHA256: "c19794df214f0c2571b19f7dea853c066410232abe9f0ddad77231fabccde0da"}.Fetch()
	if err != nil {
		t.Fatal(err)
	}
	changelog, err := exec.Command("tar", "-xJOf", patches, "debian/changelog").Output()
	if err != nil {
		t.Fatal(err)
	}
	const version = "1:1.2.11.dfsg-2+deb11u2"
	root := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(changelog)
	zw.Close()
	putFile(t, root, "usr/share/doc/zlib1g/changelog.Debian.gz", gz.Bytes())
	putFile(t, root, "var/lib/dpkg/status", []byte("Package: zlib1g\nStatus: install ok installed\nArchitecture: amd64\nSource: zlib\nVersion: "+version+"\n\n"))
	putFile(t, root, "var/lib/dpkg/info/zlib1g:amd64.list", []byte(z.Lib+"\n"))
	c, err := analysis.Open(z.Core, analysis.Options{Exe: z.Exe, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	fixes := map[string]string{} // history commit → upstream commit it quotes
	for _, h := range strings.Fields(gitsrctest.MustRun(t, z.Work, "git", "log", "--format=%H", "v1.2.11..develop", "--", "inflate.c")) {
		msg := gitsrctest.MustRun(t, z.Work, "git", "show", "-s", "--format=%B", h)
		for _, up := range []string{"eff308af425b67093bab25f80f1ae950166bece1", "1eb7682f845ac9e9bf9ae35bbfb3bad5dacbd91d"} {
			if strings.Contains(msg, up) {
				fixes[h] = up
			}
		}
	}
	if len(fixes) != 2 {
		t.Fatalf("the history's inflate.c fixes: %v", fixes)
	}
	var eff string
	for h, up := range fixes {
		if strings.HasPrefix(up, "eff308af") {
			eff = h
		}
	}
	for _, fix := range []string{eff, "CVE-2022-37434"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		res, err := Resolve(ctx, c, Options{CacheDir: t.TempDir(), Sysroot: root, Fix: fix})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		comp := componentNamed(t, res, "zlib")
		if comp.Revision != "v1.2.11" || comp.Package == nil || comp.Package.Version != version {
			t.Fatalf("component %s, package %+v; want v1.2.11 from zlib1g %s", comp.Revision, comp.Package, version)
		}
		rv := findReview(t, res, "inflate.c")
		for _, rc := range rv.Commits {
			want := ""
			if fixes[rc.Commit] != "" {
				want = version
			}
			if rc.Backported != want {
				t.Errorf("%s %q: backported %q, want %q", rc.Commit[:8], rc.Subject, rc.Backported, want)
			}
		}
		if fc := res.Fix; fc == nil || !fc.Included || !fc.Known || !strings.Contains(fc.Reason, "backported in zlib1g "+version) {
			t.Errorf("--fix %s: %+v; want included, backported in %s", fix, fc, version)
		}
	}
}
