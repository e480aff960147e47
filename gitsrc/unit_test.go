package gitsrc

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

func TestSuffixIndex(t *testing.T) {
	files := []treeFile{
		{path: "projects/clr/rocclr/device/device.cpp"},
		{path: "projects/rocr-runtime/runtime/hsa-runtime/core/runtime/device.cpp"},
		{path: "projects/clr/hipamd/src/hip_module.cpp"},
		{path: "README.md"},
	}
	ix := newSuffixIndex(files)
	for file, want := range map[string]string{
		// seed 000's build prefix, with no configuration
		"/longer_pathname_so_that_rpms_can_support_packaging_the_debug_info_for_all_os_profiles/src/rocm-systems/projects/clr/rocclr/device/device.cpp": "projects/clr/rocclr/device/device.cpp",
		"/build/rocr/runtime/hsa-runtime/core/runtime/device.cpp": "projects/rocr-runtime/runtime/hsa-runtime/core/runtime/device.cpp",
		"hipamd/src/./hip_module.cpp":                             "projects/clr/hipamd/src/hip_module.cpp",
		"/x/projects/clr/hipamd/include/../src/hip_module.cpp":    "projects/clr/hipamd/src/hip_module.cpp",
		"/nowhere/else.cpp":                                       "",
	} {
		if got, _ := ix.match(file); got != want {
			t.Errorf("match(%s) = %q, want %q", file, got, want)
		}
	}
}

// TestPackageNote reads the note gcc -Xlinker --package-metadata wrote
// into the fixture's crash program; readelf -n agrees.
func TestPackageNote(t *testing.T) {
	f := getFixture(t)
	n, err := ReadPackageNote(f.exe)
	if err != nil || n == nil {
		t.Fatalf("note %v, err %v", n, err)
	}
	want := PackageNote{Type: "git", Name: "crashy", Version: "1.0", Repository: f.httpURL + "crashy.git"}
	if *n != want {
		t.Errorf("note %+v, want %+v", *n, want)
	}
	if out, err := exec.Command("readelf", "-n", f.exe).Output(); err == nil && !strings.Contains(string(out), `"repository":"`+want.Repository+`"`) {
		t.Errorf("readelf -n does not show the repository:\n%s", out)
	}
	// No note: nil, no error.
	if n, err := ReadPackageNote("/bin/sh"); err != nil || (n != nil && n.Name == "") {
		t.Errorf("/bin/sh: %+v %v", n, err)
	}
}

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
	s, pkg, ok := sitePackage(mod)
	if !ok || s != site || pkg != "torch" {
		t.Fatalf("sitePackage = %s %s %v", s, pkg, ok)
	}
	if pf := readPython(site, "torch"); pf.version != "2.3.0+rocm6.2" || pf.commit != "97ff6cfd9c86c5c09d7ce775ab64ec5c99230f5d" {
		t.Errorf("torch: %+v", pf)
	}
	if pf := readPython(site, "vllm"); pf.repo != "https://github.com/vllm-project/vllm" || pf.commit != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("vllm: %+v", pf)
	}
	if e := registryFor(mod, "torch"); e == nil || e.name != "pytorch" || !reflect.DeepEqual(e.revisions("2.3.0+rocm6.2"), []string{"v2.3.0", "2.3.0"}) {
		t.Errorf("registry for torch: %+v", e)
	}
}

// TestRegistryROCm follows seed 000's table: ROCm 7 components live in
// the rocm-systems / rocm-libraries monorepos on release/rocm-rel-X.Y.
func TestRegistryROCm(t *testing.T) {
	mod := "/opt/rocm-7.2.0/lib/libamdhip64.so.7"
	e := registryFor(mod)
	if e == nil || e.name != "clr" {
		t.Fatalf("registry for %s: %+v", mod, e)
	}
	v := rocmPathVersion(mod)
	if v != "7.2.0" || e.repo(v) != "https://github.com/ROCm/rocm-systems" || e.revisions(v)[0] != "release/rocm-rel-7.2" {
		t.Errorf("%s: version %s repo %s revisions %v", mod, v, e.repo(v), e.revisions(v))
	}
	if ma, mi, pa, ok := rocmVersion("6.2.41133.60200-crdnnh.04"); !ok || ma != 6 || mi != 2 || pa != 0 {
		t.Errorf("rocmVersion = %d.%d.%d %v", ma, mi, pa, ok)
	}
	if e := registryFor("/usr/lib/librccl.so.1"); e == nil || e.name != "rccl" || e.revisions("6.2.0")[0] != "rocm-6.2.0" {
		t.Errorf("rccl: %+v", e)
	}
}

func TestConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`{"components": [{"module": "libamdhip64\\.so", "name": "clr", "repo": "https://github.com/ROCm/rocm-systems", "revision": "release/rocm-rel-7.2"}], "sourceMap": {"/a": "/b"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := c.rule("/opt/rocm/lib/libamdhip64.so.7"); r == nil || r.Name != "clr" {
		t.Errorf("rule: %+v", r)
	}
	for _, bad := range []string{
		`{"components": [{"module": "(", "repo": "x", "revision": "v1"}]}`,
		`{"components": [{"module": "x", "repo": "x"}]}`,
		`{"components": [], "source_map": {}}`,
		`{"components": [{"module": "x", "repo": "x", "revision": "a b"}]}`,
	} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("ParseConfig(%s) accepted", bad)
		}
	}
}

func TestCleanRepoPath(t *testing.T) {
	for _, p := range []string{"../x", "a/../../x", "/etc/passwd", "a//b", "./a", "a/.git/config", "a\x00b", `a\..\b`, ""} {
		if _, err := cleanRepoPath(p); err == nil {
			t.Errorf("cleanRepoPath(%q) accepted", p)
		}
	}
	if _, err := cleanRepoPath("src/crashy/crash.c"); err != nil {
		t.Error(err)
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

func FuzzParseConfig(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			if c, err := ParseConfig(b); err == nil {
				c.rule("/usr/lib/libx.so")
			}
		})
	})
}
