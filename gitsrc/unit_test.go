package gitsrc

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/gitsrc/moduleorigin"
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
	n, err := moduleorigin.ReadPackageNote(f.exe)
	if err != nil || n == nil {
		t.Fatalf("note %v, err %v", n, err)
	}
	want := moduleorigin.PackageNote{Type: "git", Name: "crashy", Version: "1.0", Repository: f.httpURL + "crashy.git"}
	if *n != want {
		t.Errorf("note %+v, want %+v", *n, want)
	}
	if out, err := exec.Command("readelf", "-n", f.exe).Output(); err == nil && !strings.Contains(string(out), `"repository":"`+want.Repository+`"`) {
		t.Errorf("readelf -n does not show the repository:\n%s", out)
	}
	// No note: nil, no error.
	if n, err := moduleorigin.ReadPackageNote("/bin/sh"); err != nil || (n != nil && n.Name == "") {
		t.Errorf("/bin/sh: %+v %v", n, err)
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

func FuzzParseConfig(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			if c, err := ParseConfig(b); err == nil {
				c.rule("/usr/lib/libx.so")
			}
		})
	})
}
