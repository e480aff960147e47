package gitsrctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/crashbuild"
)

// TorchPackages are the Debian packages whose files the torch core maps:
// their versions key the cached core.
var TorchPackages = []string{"python3.11-minimal", "libpython3.11-stdlib", "libtorch1.13", "python3-torch", "python3-numpy", "libc6", "libstdc++6", "gcc"}

// TorchCore builds bench/heldout/crashext.c against Debian's python3.11
// and crashes testdata/torch/torchbackward.py with it: a core cached by
// the sources' and the packages' versions (about 150 MB; generating it
// takes 10-30 s). repoRoot is the repository's root. The core's crashing
// thread runs crashext -> CPython -> numpy -> CPython -> libtorch_python ->
// libtorch_cpu's autograd engine (see testdata/torch/torchbackward.py).
func TorchCore(t testing.TB, repoRoot string) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(repoRoot, "gitsrc", "testdata", "torch", "torchbackward.py"))
	if err != nil {
		t.Fatal(err)
	}
	ext, err := os.ReadFile(filepath.Join(repoRoot, "bench", "heldout", "crashext.c"))
	if err != nil {
		t.Fatal(err)
	}
	versions, err := exec.Command("dpkg-query", append([]string{"-W"}, TorchPackages...)...).CombinedOutput()
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
		core, err := DumpCoreArgs(dir, "/usr/bin/python3.11", filepath.Join(dir, "torchbackward.py"), dir)
		if err != nil {
			return err
		}
		return os.Rename(core, filepath.Join(dir, "torch.core"))
	}, []byte("torch.core 2"), script, ext, versions)
	return filepath.Join(dir, "torch.core")
}
