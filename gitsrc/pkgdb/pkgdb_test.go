package pkgdb

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// dpkgUpstream asks dpkg-query for a package's version and returns its
// upstream part: the oracle for what the changelog's entries are on top of.
func dpkgUpstream(t *testing.T, pkg string) string {
	t.Helper()
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
	if err != nil {
		t.Fatalf("dpkg-query %s: %v", pkg, err)
	}
	v := string(out)
	if i := strings.IndexByte(v, ':'); i >= 0 {
		v = v[i+1:]
	}
	if i := strings.IndexAny(v, "-+~"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSuffix(v, ".dfsg")
}

// TestDpkg reads this machine's dpkg database; dpkg-query agrees.
func TestDpkg(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	gitPath, _ = filepath.EvalSymlinks(gitPath)
	owner, err := exec.Command("dpkg-query", "-S", gitPath).Output()
	if err != nil {
		t.Skip("git is not from a Debian package here")
	}
	pkg, _, _ := strings.Cut(strings.TrimSpace(string(owner)), ":")
	ver, _ := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
	got := dpkgOwners("", []string{gitPath})[gitPath]
	if got.Name != pkg || got.Version != string(ver) {
		t.Errorf("dpkgOwners(%s) = %v, dpkg-query says %s %s", gitPath, got, pkg, ver)
	}
}

// TestDebianUpstreamVersions: epochs, Debian revisions, repack suffixes,
// "really" and git snapshots, as bookworm's packages spell them.
func TestDebianUpstreamVersions(t *testing.T) {
	for in, want := range map[string]string{
		"1:1.2.13.dfsg-1":               "1.2.13",
		"1.13.1+dfsg-4":                 "1.13.1",
		"1:1.24.2-1+deb12u1":            "1.24.2",
		"3.11.2-6+deb12u6":              "3.11.2",
		"7.88.1-10+deb12u14":            "7.88.1",
		"2.36-9+deb12u14":               "2.36",
		"12.2.0-14+deb12u1":             "12.2.0",
		"9.1.0+ds1-2":                   "9.1.0",
		"3.0~dfsg2-1":                   "3.0",
		"2.4+really2.3-1":               "2.3",
		"1.5.0really1.4.3-2":            "1.4.3",
		"0.0~git20220216.ae108ef-1":     "ae108ef",
		"0.0~git20220513.bb1473a-2+b1":  "bb1473a",
		"20220623.1-1":                  "20220623.1",
		"5.4.1-1":                       "5.4.1",
		"1.1.1w-0+deb11u1":              "1.1.1w",
		"3.21.12-3":                     "3.21.12",
		"2.9.14+dfsg-1.3~deb12u1":       "2.9.14",
		"4.6.0+dfsg-12":                 "4.6.0",
		"1:6.2.41133.60200-crdnnh.04~1": "6.2.41133.60200",
	} {
		if got := DebianUpstream(in); got != want {
			t.Errorf("DebianUpstream(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDebianChangelogs reads this machine's real changelogs. bookworm's
// zlib1g names CVE-2022-37434 in the 1:1.2.11.dfsg-4.1 upload, in words
// that carry the subject of upstream's fix (eff308af, "Fix a bug when
// getting a gzip header extra field with inflate()."); libcurl4's security
// uploads name CVEs on top of 7.88.1.
func TestDebianChangelogs(t *testing.T) {
	zlib := ReadDebianChangelog("", &Package{Name: "zlib1g", Source: "zlib"})
	var cve *Backport
	for i := range zlib {
		if len(zlib[i].CVEs) > 0 && zlib[i].CVEs[0] == "CVE-2022-37434" {
			cve = &zlib[i]
		}
	}
	if cve == nil || !strings.HasPrefix(cve.Version, "1:1.2.11.dfsg-") || cve.Upstream != "1.2.11" {
		t.Fatalf("zlib1g: no CVE-2022-37434 change in a 1.2.11 upload: %+v", cve)
	}
	if !cve.Describes("Fix a bug when getting a gzip header extra field with inflate().") || cve.Describes("Fix a bug.") {
		t.Errorf("%q does not carry upstream's subject", cve.Text)
	}
	up := dpkgUpstream(t, "libcurl4")
	curl := SinceRelease(ReadDebianChangelog("", &Package{Name: "libcurl4", Source: "curl"}), up)
	if len(curl) < 10 {
		t.Fatalf("libcurl4: %d CVE changes on top of %s", len(curl), up)
	}
	for _, b := range curl {
		if !strings.HasPrefix(b.Version, up+"-") || len(b.CVEs) == 0 && len(b.Commits) == 0 {
			t.Errorf("libcurl4 change %+v is not a CVE or commit on top of %s", b, up)
		}
	}
}

func FuzzParseDebianChangelog(f *testing.F) {
	f.Add([]byte("zlib (1:1.2.13.dfsg-1) unstable; urgency=low\n\n  * Fix CVE-2022-37434 (eff308af).\n\n -- M <m@x>  Sat, 05 Nov 2022 12:24:46 +0000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			for _, c := range ParseDebianChangelog(bytes.NewReader(b)) {
				c.Describes("Fix a bug when getting a gzip header")
			}
		})
	})
}

func FuzzParseDpkgStatus(f *testing.F) {
	f.Add([]byte("Package: libstdc++6\nStatus: install ok installed\nSource: gcc-12 (12.2.0-14)\nVersion: 12.2.0-14+deb12u1\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			for _, p := range parseDpkgStatus(b) {
				DebianUpstream(p.Version)
			}
		})
	})
}

// TestChangesOnTopOfRelease: lines of libtorch1.13's real changelog. The
// upload that imports 1.13.1 "Fixes CVE-2022-45907" upstream, not on top
// of it; "kineto 20210224.0703c78" is another project's snapshot, not a
// commit applied; a cherry-picked upstream commit is a change on top.
func TestChangesOnTopOfRelease(t *testing.T) {
	all := ParseDebianChangelog(strings.NewReader(`pytorch (1.13.1+dfsg-2) unstable; urgency=medium

  * cherry-pick upstream commit 1eb7682f939a (fix a crash in the JIT)

 -- T <t@example.com>  Mon, 01 Jan 2023 00:00:00 +0000

pytorch (1.13.1+dfsg-1) unstable; urgency=medium

  [ Aron Xu ]
  * Team upload.
  * New upstream version 1.13.1 (Closes: #1027851)
    Fixes CVE-2022-45907.
  * debian: carry kineto 20210224.0703c78 for header-only use

 -- Aron Xu <aron@debian.org>  Wed, 01 Feb 2023 00:00:00 +0800
`))
	if len(all) != 4 || all[2].CVEs[0] != "CVE-2022-45907" || len(all[3].Commits) != 0 {
		t.Fatalf("changes %+v", all)
	}
	on := SinceRelease(all, "1.13.1")
	if len(on) != 1 || on[0].Version != "1.13.1+dfsg-2" || on[0].Commits[0] != "1eb7682f939a" {
		t.Errorf("on top of 1.13.1: %+v; want the cherry-pick alone", on)
	}
}

// TestCompareDebianVersions against dpkg --compare-versions, the oracle.
func TestCompareDebianVersions(t *testing.T) {
	vs := []string{"1:1.2.13.dfsg-1", "1:1.2.11.dfsg-4.1", "1.2.13", "7.88.1-10+deb12u10", "7.88.1-10+deb12u9", "7.88.1-10",
		"1.0~rc1-1", "1.0-1", "1.0", "1.0+b1", "2.36-9+deb12u14", "2.36-9", "0.0~git20220216.ae108ef-1", "1.13.1+dfsg-4", "10.0", "9.9"}
	for _, a := range vs {
		for _, b := range vs {
			want := 0
			for _, op := range []struct {
				op string
				v  int
			}{{"lt", -1}, {"gt", 1}} {
				if exec.Command("dpkg", "--compare-versions", a, op.op, b).Run() == nil {
					want = op.v
				}
			}
			if got := CompareDebianVersions(a, b); got != want {
				t.Errorf("CompareDebianVersions(%q, %q) = %d, dpkg says %d", a, b, got, want)
			}
		}
	}
}
