package moduleorigin

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

func TestPythonMetadata(t *testing.T) {
	site := filepath.Join(t.TempDir(), "lib", "python3.12", "site-packages")
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(site, p)), 0o755)
		if err := os.WriteFile(filepath.Join(site, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What pip writes (PEP 610 direct_url.json) and torch's generated version.py.
	write("torch-2.3.0+rocm6.2.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.3.0+rocm6.2\n")
	write("torch/version.py", "from typing import Optional\n__version__ = '2.3.0+rocm6.2'\ndebug = False\ncuda: Optional[str] = None\ngit_version = '97ff6cfd9c86c5c09d7ce775ab64ec5c99230f5d'\n")
	write("vllm-0.6.3.dist-info/METADATA", "Name: vllm\nVersion: 0.6.3\n")
	write("vllm-0.6.3.dist-info/direct_url.json", `{"url": "https://github.com/vllm-project/vllm", "vcs_info": {"vcs": "git", "commit_id": "0123456789abcdef0123456789abcdef01234567"}}`)
	mod := filepath.Join(site, "torch", "lib", "libtorch_cuda.so")
	s, pkg, ok := SitePackage(mod)
	if !ok || s != site || pkg != "torch" {
		t.Fatalf("SitePackage = %s %s %v", s, pkg, ok)
	}
	if pf := ReadPython(site, "torch"); pf.Version != "2.3.0+rocm6.2" || pf.Commit != "97ff6cfd9c86c5c09d7ce775ab64ec5c99230f5d" {
		t.Errorf("torch: %+v", pf)
	}
	if pf := ReadPython(site, "vllm"); pf.Repo != "https://github.com/vllm-project/vllm" || pf.Commit != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("vllm: %+v", pf)
	}
	if e := RegistryFor(mod, "torch"); e == nil || e.Name != "pytorch" || !reflect.DeepEqual(e.Revisions("2.3.0+rocm6.2"), []string{"v2.3.0", "2.3.0"}) {
		t.Errorf("registry for torch: %+v", e)
	}
}

// TestRegistryROCm follows seed 000's table: ROCm 7 components live in
// the rocm-systems / rocm-libraries monorepos on release/rocm-rel-X.Y.
func TestRegistryROCm(t *testing.T) {
	mod := "/opt/rocm-7.2.0/lib/libamdhip64.so.7"
	e := RegistryFor(mod)
	if e == nil || e.Name != "clr" {
		t.Fatalf("registry for %s: %+v", mod, e)
	}
	v := RocmPathVersion(mod)
	if v != "7.2.0" || e.Repo(v) != "https://github.com/ROCm/rocm-systems" || e.Revisions(v)[0] != "release/rocm-rel-7.2" {
		t.Errorf("%s: version %s repo %s revisions %v", mod, v, e.Repo(v), e.Revisions(v))
	}
	if ma, mi, pa, ok := rocmVersion("6.2.41133.60200-crdnnh.04"); !ok || ma != 6 || mi != 2 || pa != 0 {
		t.Errorf("rocmVersion = %d.%d.%d %v", ma, mi, pa, ok)
	}
	if e := RegistryFor("/usr/lib/librccl.so.1"); e == nil || e.Name != "rccl" || e.Revisions("6.2.0")[0] != "rocm-6.2.0" {
		t.Errorf("rccl: %+v", e)
	}
}

func FuzzParsePackageNotes(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			parsePackageNotes(b, binary.LittleEndian)
			parsePackageNotes(b, binary.BigEndian)
		})
	})
}

// TestVersionClues reads the release of Debian's libz from the file itself
// the three ways the registry knows, each checked against another tool:
// its real file name (the link target), its version string (dpkg-query's
// upstream version) and its highest ZLIB_ symbol version (objdump -T).
func TestVersionClues(t *testing.T) {
	real, err := filepath.EvalSymlinks("/usr/lib/x86_64-linux-gnu/libz.so.1")
	if err != nil {
		t.Fatal(err)
	}
	e := RegistryFor("/usr/lib/x86_64-linux-gnu/libz.so.1")
	if e == nil || e.Name != "zlib" {
		t.Fatalf("registry entry for libz.so.1: %+v", e)
	}
	up := gitsrctest.DpkgUpstream(t, "zlib1g")
	if v, where := e.Version.ReleaseFromFile(real, real); v != up || !strings.HasPrefix(where, "file name") {
		t.Errorf("file name %s: %q from %q; want %s", real, v, where, up)
	}
	// A copy without the release in its name: the version string says it.
	cp := filepath.Join(t.TempDir(), "libz.so.1")
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if v, where := e.Version.ReleaseFromFile(cp, cp); v != up || !strings.HasPrefix(where, "version string") {
		t.Errorf("version string: %q from %q; want %s", v, where, up)
	}
	out, err := exec.Command("objdump", "-T", real).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, m := range regexp.MustCompile(`ZLIB_([0-9.]+)`).FindAllStringSubmatch(string(out), -1) {
		if want == "" || compareReleases(m[1], want) > 0 {
			want = m[1]
		}
	}
	f := openELF(t, cp)
	if v, name := highestSymbolVersion(f, e.Version.symbols); v != want || name != "ZLIB_"+want {
		t.Errorf("symbol versions: %q (%s); objdump -T says ZLIB_%s", v, name, want)
	}
}

// TestRegistryConventions: the registry knows at least 40 upstreams, each
// with a repository, a default branch and tags for a release; the tag
// conventions of the examples.
func TestRegistryConventions(t *testing.T) {
	if len(commonUpstreams()) < 40 {
		t.Errorf("%d common upstreams, want at least 40", len(commonUpstreams()))
	}
	for _, e := range allRegistry() {
		if e.Repo == nil || e.Repo("1.2.3") == "" || e.Revisions == nil || len(e.Revisions("1.2.3")) == 0 {
			t.Errorf("%s: no repository or tags", e.Name)
		}
	}
	for _, e := range commonUpstreams() {
		if e.Branch == "" {
			t.Errorf("%s: no default branch", e.Name)
		}
	}
	for _, tc := range []struct {
		name, module, version string
		tags                  []string
	}{
		{"zlib", "/usr/lib/libz.so.1.2.12", "1.2.12", []string{"v1.2.12", "1.2.12"}},
		{"curl", "/usr/lib/x86_64-linux-gnu/libcurl.so.4.8.0", "7.88.1", []string{"curl-7_88_1"}},
		{"expat", "/lib/x86_64-linux-gnu/libexpat.so.1", "2.5.0", []string{"R_2_5_0"}},
		{"openssl", "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "3.0.11", []string{"openssl-3.0.11"}},
		{"openssl", "/usr/lib/libssl.so.1.1", "1.1.1w", []string{"OpenSSL_1_1_1w"}},
		{"glibc", "/usr/lib/x86_64-linux-gnu/libc.so.6", "2.36", []string{"glibc-2.36"}},
		{"gcc", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", "12.2.0", []string{"releases/gcc-12.2.0"}},
		{"cpython", "/usr/bin/python3.11", "3.11.2", []string{"v3.11.2", "3.11.2"}},
		{"protobuf", "/usr/lib/x86_64-linux-gnu/libprotobuf.so.32.0.12", "3.21.12", []string{"v21.12", "v3.21.12"}},
		{"llvm", "/usr/lib/llvm-14/lib/libLLVM-14.so.1", "14.0.6", []string{"llvmorg-14.0.6"}},
		{"hdf5", "/usr/lib/x86_64-linux-gnu/hdf5/serial/libhdf5_serial.so.103", "1.10.8", []string{"hdf5-1_10_8", "hdf5_1.10.8"}},
		{"xnnpack", "/usr/lib/x86_64-linux-gnu/libXNNPACK.so.0", "ae108ef", []string{"ae108ef"}},
		{"pytorch", "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13", "1.13.1", []string{"v1.13.1", "1.13.1"}},
	} {
		e := RegistryFor(tc.module)
		if e == nil || e.Name != tc.name {
			t.Errorf("%s: entry %+v, want %s", tc.module, e, tc.name)
			continue
		}
		if got := e.Revisions(tc.version); !reflect.DeepEqual(got, tc.tags) {
			t.Errorf("%s %s: tags %v, want %v", tc.name, tc.version, got, tc.tags)
		}
	}
	// Debian source packages name the same entries.
	for src, name := range map[string]string{"zlib": "zlib", "python3.11": "cpython", "gcc-12": "gcc", "pytorch": "pytorch", "numpy": "numpy", "glibc": "glibc"} {
		if e := RegistryFor("", src); e == nil || e.Name != name {
			t.Errorf("source package %s: %+v, want %s", src, e, name)
		}
	}
}

func openELF(t *testing.T, path string) *elf.File {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
