package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/gitsrc/gitsrctest"
)

// TestSources runs the README's three `faultline sources` examples on a
// crash of a program built from a real git repository (served by git
// http-backend and git daemon on 127.0.0.1, named by the program's
// .note.package): the component and its exact revision, the frames mapped
// onto the checkout, the upstream fix of the crashing function, and
// whether a given commit is in the crashing revision. Last round every
// call of this command panicked (flag redefined: offline).
func TestSources(t *testing.T) {
	fx, err := gitsrctest.New(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer fx.Close()
	dir := t.TempDir()
	copyFile(t, fx.Core, filepath.Join(dir, "core.12345"), false)
	inv := invocation{dir: dir, env: []string{"XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}, timeout: 2 * time.Minute}
	fixCommit := fx.Rev["Fix NULL dereference in parse_record"]

	r := example(t, "faultline sources core.12345", inv)
	wantExit(t, r, 0)
	wantContains(t, "sources report", r.stdout,
		"Components", "crashy", fx.HTTPURL+"crashy.git", fx.Rev["v1.0"][:12],
		"Frames", "crash.c", "Upstream crashy", "parse_record", fixCommit[:12], "Fix NULL dereference in parse_record")

	cfg := `{"components": [{"module": "crashy", "repo": "` + fx.GitURL + `crashy.git", "revision": "v1.0"}]}`
	if err := os.WriteFile(filepath.Join(dir, "faultline.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r = example(t, "faultline sources --json --config faultline.json core.12345", inv)
	wantExit(t, r, 0)
	var res struct {
		Components []struct{ Name, Repo, Revision, Commit, Origin, Checkout string }
		Frames     []struct{ File, Source, Function string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if len(res.Components) != 1 || res.Components[0].Repo != fx.GitURL+"crashy.git" || res.Components[0].Commit != fx.Rev["v1.0"] {
		t.Fatalf("components from faultline.json: %+v", res.Components)
	}
	mapped := false
	for _, f := range res.Frames {
		if f.Function == "parse_record" && strings.HasPrefix(f.Source, res.Components[0].Checkout) {
			if _, err := os.Stat(f.Source); err == nil {
				mapped = true
			}
		}
	}
	if !mapped {
		t.Errorf("parse_record's frame is not mapped onto a checked-out file: %+v", res.Frames)
	}

	r = example(t, "faultline sources --fix 1a2b3c4 core.12345", inv, "1a2b3c4", fixCommit[:7])
	wantExit(t, r, 0)
	wantContains(t, "--fix of a later commit", r.stdout, "Fix "+fixCommit[:7], "NOT included")
	r = faultline(t, inv, "sources", "--offline", "--fix", fx.Rev["Add record counting"], "core.12345")
	wantExit(t, r, 0)
	wantContains(t, "--fix of an earlier commit, offline from the cache", r.stdout, "already included")
}

// TestSourcesTorchOffline (issue 22, Done when): `faultline sources
// --offline` on Debian's python3.11 + python3-torch + python3-numpy crashed
// in a C extension under autograd's backward lists CPython, pytorch and
// numpy at the tags of the releases dpkg says are installed, each with its
// repository, and how to map their frames, which have no local DWARF.
func TestSourcesTorchOffline(t *testing.T) {
	core := gitsrctest.TorchCore(t, repoRoot)
	dir := t.TempDir()
	inv := invocation{dir: dir, env: []string{"XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}, timeout: 2 * time.Minute}
	r := faultline(t, inv, "sources", "--offline", "--quiet", core)
	wantExit(t, r, 0)
	release := func(pkg string) string {
		out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
		if err != nil {
			t.Fatal(err)
		}
		v := string(out)
		if i := strings.IndexByte(v, ':'); i >= 0 {
			v = v[i+1:]
		}
		return v[:strings.IndexAny(v, "-+~")]
	}
	wantContains(t, "sources --offline on the torch core", r.stdout,
		"cpython", "https://github.com/python/cpython @ v"+release("python3.11-minimal"),
		"pytorch", "https://github.com/pytorch/pytorch @ v"+release("libtorch1.13"),
		"numpy", "https://github.com/numpy/numpy @ v"+release("python3-numpy"),
		"install libtorch1.13-dbgsym", "install python3.11-dbg", "install python3-numpy-dbgsym", "https://debuginfod.debian.net")
	if strings.Contains(r.stdout, "1.13.0a0") {
		t.Errorf("the egg-info's version leaked into the answer:\n%s", r.stdout)
	}
}
