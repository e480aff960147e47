package gitsrc

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/internal/apporttest"
)

// TestApportPackagesOverLocal (issue 22 item 3b): the apport report of a
// crash in Debian's libcurl, recorded when an older libcurl4 was installed
// (the upload three before this machine's, from its own changelog). The
// component takes the recorded version (recordedBy apport), and the
// backports are those of uploads up to it: --fix of a CVE a later upload
// fixed is not answered from the changelog; one of an earlier is.
func TestApportPackagesOverLocal(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/debianlibs/crashlibs.c")
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, dir, "crashlibs.c", src)
	exe := filepath.Join(dir, "crashlibs")
	if out, err := exec.Command("gcc", "-g", "-o", exe, filepath.Join(dir, "crashlibs.c"), "-lz", "-lcurl", "-lexpat").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	c, err := analysis.Open(crashWithArgs(t, dir, exe, "curl"), analysis.Options{Exe: exe, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	local := componentNamed(t, resolveOffline(t, c), "curl")
	var uploads []string // newest first, each once, those with CVEs on top of the release
	for _, b := range local.Backports {
		if len(uploads) == 0 || uploads[len(uploads)-1] != b.Version {
			uploads = append(uploads, b.Version)
		}
	}
	if len(uploads) < 5 {
		t.Fatalf("libcurl4's changelog has %d CVE uploads on top of %s", len(uploads), local.Package.Upstream)
	}
	old := uploads[3]
	report := apportReport(t, dir, c, exe, "libcurl4 "+old)
	rc, err := analysis.Open(report, analysis.Options{Exe: exe, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	res := resolveOffline(t, rc)
	comp := componentNamed(t, res, "curl")
	if p := comp.Package; p == nil || p.Version != old || p.RecordedBy != "apport" || p.Source != "curl" || !hasFact(comp, "package", "apport report") {
		t.Fatalf("package %+v facts %+v; want libcurl4 %s recorded by apport", p, comp.Facts, old)
	}
	for _, b := range comp.Backports {
		if b.Version == uploads[0] {
			t.Errorf("a change of %s, after the recorded %s, counted: %+v", uploads[0], old, b)
		}
	}
	fix := func(cve string) *FixCheck {
		res, err := Resolve(t.Context(), rc, Options{CacheDir: t.TempDir(), Offline: true, Fix: cve, Review: ReviewOptions{Disabled: true}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Fix
	}
	later, earlier := cveOf(local.Backports, uploads[0]), cveOf(local.Backports, uploads[len(uploads)-1])
	if fc := fix(later); fc.Included {
		t.Errorf("--fix %s (fixed in %s, after %s): %+v", later, uploads[0], old, fc)
	}
	if fc := fix(earlier); !fc.Included || fc.Backport == nil {
		t.Errorf("--fix %s (fixed in %s, before %s): %+v", earlier, uploads[len(uploads)-1], old, fc)
	}
}

// cveOf is a CVE that the changes of one upload name.
func cveOf(bs []Backport, version string) string {
	for _, b := range bs {
		if b.Version == version && len(b.CVEs) > 0 {
			return b.CVEs[0]
		}
	}
	return ""
}

// apportReport writes the apport report of crash c of exe (not from a
// package) whose Dependencies record the given packages ("NAME VERSION").
func apportReport(t *testing.T, dir string, c *analysis.Crash, exe string, deps ...string) string {
	t.Helper()
	core, err := os.Open(c.Dump.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	var b bytes.Buffer
	err = apporttest.Write(&b, map[string]string{"ProblemType": "Crash", "Architecture": "amd64", "ExecutablePath": exe,
		"ProcCmdline": exe + " curl", "Dependencies": strings.Join(deps, "\n"), "Signal": "11"},
		map[string]io.Reader{"CoreDump": core})
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "crashlibs.crash")
	if err := os.WriteFile(report, b.Bytes(), 0o640); err != nil {
		t.Fatal(err)
	}
	return report
}

// TestABRTPackagesIdentify: ABRT's dso_list names the rpm that shipped
// each module (here on a machine whose databases know nothing of it): the
// inventory takes it, rpm's version-release to the upstream release.
func TestABRTPackagesIdentify(t *testing.T) {
	mod, exe := "/usr/lib64/libz.so.1", "/usr/bin/gzip-crash"
	c := &analysis.Crash{Dump: analysis.Dump{Executable: exe, Report: "abrt"},
		Modules: []analysis.Module{{Path: exe}, {Path: mod}},
		Threads: []analysis.Thread{{ID: 1, Crashed: true, Frames: []analysis.Frame{{Module: mod, Function: "crc32_z"}, {Module: exe, Function: "main"}}}},
		Packages: []analysis.Package{
			{Name: "gzip-crash", Version: "1.12-3.fc38", Origin: "abrt", Program: true, Source: "gzip"},
			{Name: "zlib", Version: "1.2.13-3.fc38", Origin: "abrt", Files: []string{mod}}}}
	comps, problems := inventory(c, &Options{Sysroot: t.TempDir()}, map[string][]string{})
	var zlib *component
	for _, comp := range comps {
		if comp.Name == "zlib" {
			zlib = comp
		}
	}
	if zlib == nil || zlib.Revision != "v1.2.13" || zlib.Package.Manager != "rpm" || zlib.Package.RecordedBy != "abrt" || zlib.Package.Upstream != "1.2.13" {
		t.Fatalf("components %+v problems %+v; want zlib v1.2.13 from ABRT's rpm", comps, problems)
	}
	// The program's package names it, though no registry entry knows gzip-crash.
	found := false
	for _, p := range problems {
		found = found || p.Module == exe && strings.Contains(p.Message, "rpm package gzip-crash")
	}
	if !found {
		t.Errorf("problems %+v; want the program's recorded package named", problems)
	}
}
