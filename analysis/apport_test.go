package analysis_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/input"
	"github.com/faultline-dev/faultline/internal/apporttest"
	"github.com/faultline-dev/faultline/internal/crashbuild"
	"github.com/faultline-dev/faultline/internal/testgz"
)

// frameLines are a crash's threads and frames as gdb's bt names them.
func frameLines(c *analysis.Crash) []string {
	var out []string
	for _, t := range c.Threads {
		for _, f := range t.Frames {
			out = append(out, fmt.Sprintf("%d #%d %s %s:%d", t.ID, f.Index, f.Function, f.File, f.Line))
		}
	}
	return out
}

// sameCrash checks that the report opened as its core did: signal,
// crashing thread, every frame, the classification's kind.
func sameCrash(t *testing.T, got, want *analysis.Crash) {
	t.Helper()
	if got.Signal == nil || want.Signal == nil || *got.Signal != *want.Signal || got.CrashingThreadID != want.CrashingThreadID {
		t.Errorf("signal %+v thread %d; the core: %+v thread %d", got.Signal, got.CrashingThreadID, want.Signal, want.CrashingThreadID)
	}
	if g, w := frameLines(got), frameLines(want); !slices.Equal(g, w) || len(w) == 0 {
		t.Errorf("frames of the report:\n%s\nof the core:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	if got.Classification == nil || got.Classification.Kind != want.Classification.Kind {
		t.Errorf("classification %+v, the core's %+v", got.Classification, want.Classification)
	}
}

// apportNullInline is the corpus's apport report of null_inline's core:
// the report apport writes of that crash (ExecutablePath as the core
// records it, no Package: the program is not packaged), which
// testdata/native/gen.sh makes with internal/apporttest/apportreport.
var apportNullInline = filepath.Join(corpus, "cores", "null_inline.crash")

// TestApportCorpusReport: the checked-in apport report of null_inline
// holds that core (its CoreDump decodes to the core's bytes) and opens as
// the core does, with its fields in the model.
func TestApportCorpusReport(t *testing.T) {
	core := filepath.Join(corpus, "cores", "null_inline.core.gz")
	plain := filepath.Join(t.TempDir(), "core")
	testgz.Gunzip(t, core, plain)
	in, err := input.Open(apportNullInline)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(in.Reader())
	in.Close()
	want, _ := os.ReadFile(plain)
	if !bytes.Equal(got, want) || in.Report == nil || in.Report.Kind != "apport" {
		t.Fatalf("the report's CoreDump: %d bytes, the core %d (equal: %v); report %+v", len(got), len(want), bytes.Equal(got, want), in.Report)
	}
	exe := filepath.Join(corpus, "bin", "null_inline")
	fromReport, err := analysis.Open(apportNullInline, analysis.Options{Exe: exe, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	fromCore, err := analysis.Open(core, analysis.Options{Exe: exe, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	sameCrash(t, fromReport, fromCore)
	if fromReport.Dump.Report != "apport" || fromReport.Dump.Path != apportNullInline || fromReport.Dump.Format != "elf-core" {
		t.Errorf("dump %+v", fromReport.Dump)
	}
}

// pythonCrash crashes Debian's python3 (a NULL read through ctypes) in
// dir and returns its core and the /proc/self/maps it printed first.
func pythonCrash(t *testing.T, dir string) (core, maps string) {
	t.Helper()
	var out bytes.Buffer
	core = crashbuild.CrashCommand(t, dir, &out, "/usr/bin/python3", "-c",
		"import ctypes,sys; sys.stdout.write(open('/proc/self/maps').read()); sys.stdout.flush(); ctypes.string_at(0)")
	return core, strings.TrimSpace(out.String())
}

// debianPythonReport writes the apport report of a crash of Debian's
// python3: its package, source package and transitive dependencies at the
// versions dpkg has installed, ProcMaps as the process printed it.
func debianPythonReport(t *testing.T, dir, core, maps string) (report, pkg string) {
	t.Helper()
	exe, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err != nil {
		t.Fatal(err)
	}
	owner, err := exec.Command("dpkg-query", "-S", exe).Output()
	if err != nil {
		t.Fatalf("dpkg-query -S %s: %v", exe, err)
	}
	pkg, _, _ = strings.Cut(string(owner), ":")
	pkgLine, err := apporttest.Package(pkg)
	if err != nil {
		t.Fatal(err)
	}
	deps, err := apporttest.Dependencies(pkg)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := exec.Command("dpkg-query", "-W", "-f=${source:Package}", pkg).Output()
	f, err := os.Open(core)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	report = filepath.Join(dir, "_usr_bin_python3.11.0.crash")
	var b bytes.Buffer
	err = apporttest.Write(&b, map[string]string{
		"ProblemType": "Crash", "Architecture": "amd64", "ExecutablePath": exe,
		"ProcCmdline": "/usr/bin/python3 -c import\\ ctypes", "Package": pkgLine, "SourcePackage": string(src),
		"PackageArchitecture": "amd64", "Dependencies": deps, "ProcMaps": maps, "Signal": "11",
	}, map[string]io.Reader{"CoreDump": f})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(report, b.Bytes(), 0o640); err != nil {
		t.Fatal(err)
	}
	return report, pkg
}

// TestApportReportOfADebianCrash: Debian's python3 crashed here, and the
// apport report apport would write of it: it opens as its core does, and
// the model's packages are dpkg's: the program's package (with its source
// package) first, then every dependency at its installed version. The
// same report cut inside CoreDump opens as a truncated core with a
// problem saying so; one without CoreDump is refused, saying why.
func TestApportReportOfADebianCrash(t *testing.T) {
	dir := t.TempDir()
	core, maps := pythonCrash(t, dir)
	report, pkg := debianPythonReport(t, dir, core, maps)
	fromReport, err := analysis.Open(report, analysis.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	fromCore, err := analysis.Open(core, analysis.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	sameCrash(t, fromReport, fromCore)
	checkDebianPackages(t, fromReport.Packages, pkg)
	if fromReport.Dump.Report != "apport" {
		t.Errorf("dump.report %q", fromReport.Dump.Report)
	}

	b, _ := os.ReadFile(report)
	i := bytes.Index(b, []byte("CoreDump: base64\n"))
	cut := filepath.Join(dir, "cut.crash")
	os.WriteFile(cut, b[:i+(len(b)-i)/2], 0o644)
	c, err := analysis.Open(cut, analysis.Options{Offline: true})
	if err != nil {
		t.Fatalf("a report cut inside CoreDump: %v", err)
	}
	if !slices.ContainsFunc(c.Problems, func(p analysis.Problem) bool { return strings.Contains(p.Message, "breaks off") }) {
		t.Errorf("a report cut inside CoreDump: problems %+v", c.Problems)
	}
	noCore := filepath.Join(dir, "nocore.crash")
	os.WriteFile(noCore, b[:i], 0o644)
	if _, err := analysis.Open(noCore, analysis.Options{Offline: true}); err == nil || !strings.Contains(err.Error(), "no CoreDump field") {
		t.Errorf("a report without CoreDump: %v", err)
	}
}

// checkDebianPackages checks the model's packages against dpkg.
func checkDebianPackages(t *testing.T, got []analysis.Package, pkg string) {
	t.Helper()
	if len(got) < 3 || got[0].Name != pkg || !got[0].Program || got[0].Origin != "apport" || got[0].Source == "" {
		t.Fatalf("packages %+v; want %s first", got, pkg)
	}
	for _, p := range got {
		line, err := apporttest.Package(p.Name)
		if err != nil || line != p.Name+" "+p.Version {
			t.Errorf("package %+v; dpkg says %q (%v)", p, line, err)
		}
	}
	if !slices.ContainsFunc(got, func(p analysis.Package) bool { return p.Name == "libc6" && !p.Program }) {
		t.Errorf("libc6 is not among the dependencies: %+v", got)
	}
}

// TestABRTProblemDirectory: an ABRT problem directory (Fedora's
// /var/spool/abrt/ccpp-*, laid out as abrt writes it) around the core of
// Debian's python3 crashed here: it opens as its core does, and the model
// has the program's package from pkg_name … pkg_arch and component, and
// each library's package from dso_list with the objects it provides. A
// directory without a coredump is refused, saying so.
func TestABRTProblemDirectory(t *testing.T) {
	dir := t.TempDir()
	core, _ := pythonCrash(t, dir)
	fromCore, err := analysis.Open(core, analysis.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	pd := filepath.Join(dir, "ccpp-2025-06-14-10:21:07.123456-4242")
	items := map[string]string{
		"executable": "/usr/bin/python3.11", "cmdline": "/usr/bin/python3 -c import\\ ctypes",
		"package": "python3.11-minimal-3.11.2-6", "pkg_name": "python3.11-minimal", "pkg_epoch": "0",
		"pkg_version": "3.11.2", "pkg_release": "6", "pkg_arch": "x86_64", "pkg_vendor": "Debian",
		"component": "python3.11", "analyzer": "abrt-ccpp", "type": "CCpp", "reason": "python3.11 killed by SIGSEGV",
	}
	var dsos []string
	for _, m := range fromCore.Modules {
		if strings.HasPrefix(m.Path, "/usr/lib/") {
			dsos = append(dsos, m.Path+" "+filepath.Base(m.Path)+"-pkg-1:2.36-9.x86_64 (Debian) 1749896467")
		}
	}
	items["dso_list"] = strings.Join(dsos, "\n") + "\n"
	for name, text := range items {
		writeItem(t, filepath.Join(pd, name), []byte(text+"\n"))
	}
	b, _ := os.ReadFile(core)
	writeItem(t, filepath.Join(pd, "coredump"), b)

	c, err := analysis.Open(pd, analysis.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	sameCrash(t, c, fromCore)
	if c.Dump.Report != "abrt" || c.Dump.Path != pd {
		t.Errorf("dump %+v", c.Dump)
	}
	if len(c.Packages) != len(dsos)+1 {
		t.Fatalf("%d packages, want the program's and %d of dso_list: %+v", len(c.Packages), len(dsos), c.Packages)
	}
	want := analysis.Package{Name: "python3.11-minimal", Version: "3.11.2-6", Origin: "abrt", Program: true,
		Source: "python3.11", Arch: "x86_64", Archive: "Debian"}
	if p := c.Packages[0]; !equalPackage(p, want) {
		t.Errorf("program package %+v, want %+v", p, want)
	}
	for _, p := range c.Packages[1:] {
		if p.Version != "1:2.36-9" || p.Arch != "x86_64" || p.Archive != "Debian" || len(p.Files) != 1 ||
			p.Name != filepath.Base(p.Files[0])+"-pkg" || p.Origin != "abrt" {
			t.Errorf("dso_list package %+v", p)
		}
	}

	os.Remove(filepath.Join(pd, "coredump"))
	if _, err := analysis.Open(pd, analysis.Options{Offline: true}); err == nil || !strings.Contains(err.Error(), "coredump") {
		t.Errorf("a problem directory without its core: %v", err)
	}
}

func equalPackage(a, b analysis.Package) bool {
	return a.Name == b.Name && a.Version == b.Version && a.Origin == b.Origin && a.Program == b.Program &&
		a.Source == b.Source && a.Arch == b.Arch && a.Archive == b.Archive
}

func writeItem(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o640); err != nil {
		t.Fatal(err)
	}
}
