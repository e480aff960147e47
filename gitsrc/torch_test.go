package gitsrc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/internal/crashbuild"
)

// torchPackages are the Debian packages whose files the torch core maps:
// their versions key the cached core.
var torchPackages = []string{"python3.11-minimal", "libpython3.11-stdlib", "libtorch1.13", "python3-torch", "python3-numpy", "libc6", "libstdc++6", "gcc"}

// torchCore builds bench/heldout/crashext.c against Debian's python3.11
// and crashes testdata/torch/torchbackward.py with it: a core cached by
// the sources' and the packages' versions (about 150 MB; generating it
// takes some 10 s).
func torchCore(t *testing.T) string {
	t.Helper()
	script, err := os.ReadFile("testdata/torch/torchbackward.py")
	if err != nil {
		t.Fatal(err)
	}
	ext, err := os.ReadFile("../bench/heldout/crashext.c")
	if err != nil {
		t.Fatal(err)
	}
	versions, err := exec.Command("dpkg-query", append([]string{"-W"}, torchPackages...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-query: %v\n%s(.ci/install.d/torch.sh installs python3-torch)", err, versions)
	}
	dir := crashbuild.Cached(t, "gitsrc-torch", func(dir string) error {
		for name, b := range map[string][]byte{"torchbackward.py": script, "crashext.c": ext} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				return err
			}
		}
		suffix, err := exec.Command("python3.11-config", "--extension-suffix").Output()
		if err != nil {
			return fmt.Errorf("python3.11-config: %v (apt-get install python3-dev)", err)
		}
		includes, err := exec.Command("python3.11-config", "--includes").Output()
		if err != nil {
			return err
		}
		args := append([]string{"-shared", "-fPIC", "-g", "-O1", "-o", "crashext" + strings.TrimSpace(string(suffix)), "crashext.c"},
			strings.Fields(string(includes))...)
		cc := exec.Command("gcc", args...)
		cc.Dir = dir
		if out, err := cc.CombinedOutput(); err != nil {
			return fmt.Errorf("gcc: %v\n%s", err, out)
		}
		core := crashWithArgs(t, dir, "/usr/bin/python3.11", filepath.Join(dir, "torchbackward.py"), dir)
		return os.Rename(core, filepath.Join(dir, "core"))
	}, script, ext, versions)
	return filepath.Join(dir, "core")
}

// TestTorchCoreIdentified (issue 22, Done when): Debian's python3.11 with
// python3-torch and python3-numpy crashed in a C extension called from
// autograd's backward. Offline and with no configuration, the inventory
// names CPython, pytorch and numpy with their repositories and the tags of
// the upstream releases dpkg says are installed (not the
// torch-1.13.0a0+gitunknown of Debian's egg-info), and says for their
// frames, which have no local DWARF, how to map them.
func TestTorchCoreIdentified(t *testing.T) {
	c, err := analysis.Open(torchCore(t), analysis.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	res := resolveOffline(t, c)
	for _, tc := range []struct {
		name, repo, pkg, source, module string
	}{
		{"cpython", "https://github.com/python/cpython", "python3.11-minimal", "python3.11", "/usr/bin/python3.11"},
		{"pytorch", "https://github.com/pytorch/pytorch", "libtorch1.13", "pytorch", "libtorch_cpu.so"},
		{"numpy", "https://github.com/numpy/numpy", "python3-numpy", "numpy", "_multiarray_umath"},
	} {
		comp := componentNamed(t, res, tc.name)
		want := "v" + dpkgUpstream(t, tc.pkg)
		if comp.Repo != tc.repo || comp.Revision != want || comp.Branch != "main" {
			t.Errorf("%s: %s @ %s (branch %s); want %s @ %s on main", tc.name, comp.Repo, comp.Revision, comp.Branch, tc.repo, want)
		}
		if p := comp.Package; p == nil || p.Manager != "dpkg" || p.Source != tc.source {
			t.Errorf("%s: package %+v; want dpkg, source %s", tc.name, p, tc.source)
		}
		if !strings.Contains(strings.Join(comp.Modules, " "), tc.module) {
			t.Errorf("%s: modules %v lack %s", tc.name, comp.Modules, tc.module)
		}
		if !strings.Contains(comp.DebugInfo, "without line info") || !strings.Contains(comp.DebugInfo, "debuginfod.debian.net") ||
			!strings.Contains(comp.DebugInfo, "-dbg") {
			t.Errorf("%s: no step to map its frames: %q", tc.name, comp.DebugInfo)
		}
	}
	if p := componentNamed(t, res, "pytorch"); !strings.Contains(p.DebugInfo, "libtorch1.13-dbgsym") {
		t.Errorf("pytorch: %q does not name libtorch1.13-dbgsym", p.DebugInfo)
	}
	if !problemFor(res, findModule(t, c, "crashext"), "nothing identifies") {
		t.Errorf("no problem names the unidentified extension: %+v", res.Problems)
	}
}

func findModule(t *testing.T, c *analysis.Crash, part string) string {
	t.Helper()
	for _, m := range c.Modules {
		if strings.Contains(filepath.Base(m.Path), part) {
			return m.Path
		}
	}
	t.Fatalf("no module %s", part)
	return ""
}
