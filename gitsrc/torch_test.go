package gitsrc

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
)

// TestTorchCoreIdentified (issue 22, Done when): Debian's python3.11 with
// python3-torch and python3-numpy crashed in a C extension called from
// autograd's backward. Offline and with no configuration, the inventory
// names CPython, pytorch and numpy with their repositories and the tags of
// the upstream releases dpkg says are installed (not the
// torch-1.13.0a0+gitunknown of Debian's egg-info), and says for their
// frames, which have no local DWARF, how to map them.
func TestTorchCoreIdentified(t *testing.T) {
	c, err := analysis.Open(gitsrctest.TorchCore(t, ".."), analysis.Options{Offline: true})
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
		want := "v" + gitsrctest.DpkgUpstream(t, tc.pkg)
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
