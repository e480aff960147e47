package gitsrc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
)

func findFrame(t *testing.T, r *Result, function string) FrameSource {
	t.Helper()
	for _, f := range r.Frames {
		if f.Function == function {
			return f
		}
	}
	t.Fatalf("no frame of %s among %+v", function, r.Frames)
	return FrameSource{}
}

func findReview(t *testing.T, r *Result, path string) FileReview {
	t.Helper()
	for _, u := range r.Upstream {
		if u.Path == path {
			return u
		}
	}
	t.Fatalf("no upstream review of %s (problems %+v)", path, r.Problems)
	return FileReview{}
}

func gitShow(t *testing.T, f *fixture, spec string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", f.work, "show", spec).Output()
	if err != nil {
		t.Fatalf("git show %s: %v", spec, err)
	}
	return string(out)
}

// TestResolveFromPackageNote: no configuration at all — the .note.package
// names the HTTP repository and version 1.0, the v1.0 tag is checked out,
// DWARF paths under the fake build prefix land on the checkout, and the
// upstream review lists the fix of the crashing function.
func TestResolveFromPackageNote(t *testing.T) {
	f := getFixture(t)
	// The crash model has DWARF paths under the fake prefix.
	pr := findFrameModel(t, f.crash, "parse_record")
	if !strings.HasPrefix(pr.File, buildPrefix+"/") {
		t.Fatalf("frame file %q is not under the build prefix", pr.File)
	}
	res := f.resolve(t, Options{})
	if len(res.Components) != 1 {
		t.Fatalf("components %+v, problems %+v", res.Components, res.Problems)
	}
	c := res.Components[0]
	if c.Repo != f.httpURL+"crashy.git" || c.Revision != "v1.0" || c.Commit != f.rev["v1.0"] || c.Origin != "package-note" {
		t.Errorf("component %+v; want repo %scrashy.git revision v1.0 commit %s from package-note", c, f.httpURL, f.rev["v1.0"])
	}
	// The checkout holds v1.0's files, byte for byte.
	for _, p := range []string{"src/crashy/crash.c", "src/crashy/util.c", "README"} {
		got, err := os.ReadFile(filepath.Join(c.Checkout, p))
		if err != nil {
			t.Fatal(err)
		}
		if want := gitShow(t, f, "v1.0:"+p); string(got) != want {
			t.Errorf("%s in the checkout differs from v1.0's", p)
		}
	}
	// Paths remap without configuration.
	for fn, p := range map[string]string{"parse_record": "src/crashy/crash.c", "run_records": "src/crashy/util.c", "main": "src/crashy/main.c"} {
		fs := findFrame(t, res, fn)
		if fs.Path != p || fs.Source != filepath.Join(c.Checkout, p) {
			t.Errorf("frame %s: %s → %s (path %s); want %s", fn, fs.File, fs.Source, fs.Path, p)
		}
	}
	// Upstream: the fix is listed and touches the frame; the comment
	// reword touches the file only; unrelated commits are not listed.
	rv := findReview(t, res, "src/crashy/crash.c")
	got := map[string]ReviewCommit{}
	for _, rc := range rv.Commits {
		got[rc.Commit] = rc
	}
	fixC, ok := got[f.rev["Fix NULL dereference in parse_record"]]
	if !ok || !fixC.TouchesFrame {
		t.Errorf("fix commit listed %v touchesFrame %v; commits %+v", ok, fixC.TouchesFrame, rv.Commits)
	}
	if rv.Commits[0].Commit != fixC.Commit {
		t.Errorf("the fix is not ranked first: %+v", rv.Commits)
	}
	if !strings.Contains(fixC.Hunk, "+\tif (r == NULL)") {
		t.Errorf("fix hunk %q", fixC.Hunk)
	}
	if rw, ok := got[f.rev["Reword the usage comment in crash.c"]]; !ok || rw.TouchesFrame {
		t.Errorf("comment reword listed %v touchesFrame %v", ok, rw.TouchesFrame)
	}
	for _, s := range []string{"Add notes on the record format", "Print a banner in main", "Rename util.c to helpers.c", "Guard run_records against an empty batch"} {
		if _, ok := got[f.rev[s]]; ok {
			t.Errorf("unrelated commit %q listed for crash.c", s)
		}
	}
	if len(rv.Commits) != 2 {
		t.Errorf("crash.c: %d commits, want 2: %+v", len(rv.Commits), rv.Commits)
	}
	if rv.FunctionStart != 8 || rv.FunctionEnd != 14 {
		t.Errorf("parse_record at v1.0 spans %d-%d, want 8-14", rv.FunctionStart, rv.FunctionEnd)
	}
	// The caller's file was renamed upstream: the review follows it.
	uv := findReview(t, res, "src/crashy/util.c")
	var guard *ReviewCommit
	for i, rc := range uv.Commits {
		if rc.Commit == f.rev["Guard run_records against an empty batch"] {
			guard = &uv.Commits[i]
		}
	}
	if guard == nil || !guard.TouchesFrame || guard.Path != "src/crashy/helpers.c" {
		t.Errorf("util.c review %+v: want the guard commit on helpers.c touching run_records", uv.Commits)
	}
}

func findFrameModel(t *testing.T, c *analysis.Crash, fn string) analysis.Frame {
	t.Helper()
	for _, th := range c.Threads {
		for _, fr := range th.Frames {
			if fr.Function == fn {
				return fr
			}
		}
	}
	t.Fatalf("the crash model has no frame of %s", fn)
	return analysis.Frame{}
}

// TestFixAncestry answers --fix: the upstream fix is not in v1.0, the
// initial commit is (which needs v1.0's history, fetched deeper).
func TestFixAncestry(t *testing.T) {
	f := getFixture(t)
	cache := t.TempDir()
	res := f.resolve(t, Options{CacheDir: cache, Review: ReviewOptions{Disabled: true}, Fix: f.rev["Fix NULL dereference in parse_record"][:10]})
	if res.Fix == nil || !res.Fix.Known || res.Fix.Included || res.Fix.Commit != f.rev["Fix NULL dereference in parse_record"] {
		t.Errorf("fix check %+v; want known, not included", res.Fix)
	}
	res = f.resolve(t, Options{CacheDir: cache, Review: ReviewOptions{Disabled: true}, Fix: f.rev["Initial crashy"]})
	if res.Fix == nil || !res.Fix.Known || !res.Fix.Included {
		t.Errorf("fix check %+v; want known, included", res.Fix)
	}
	// git agrees.
	for s, want := range map[string]bool{"Fix NULL dereference in parse_record": false, "Initial crashy": true} {
		err := exec.Command("git", "-C", f.work, "merge-base", "--is-ancestor", f.rev[s], "v1.0").Run()
		if (err == nil) != want {
			t.Errorf("git merge-base --is-ancestor %s v1.0 = %v, faultline said %v", s, err == nil, want)
		}
	}
}

// TestFetchByHash: a configured commit hash that no reference points at
// is fetched by hash from a server that allows it, and found by a deeper
// fetch from one that refuses (git daemon, uploadpack defaults).
func TestFetchByHash(t *testing.T) {
	f := getFixture(t)
	hash := f.rev["Initial crashy"] // no branch or tag points here
	for _, tc := range []struct {
		repo        string
		wantRefused bool
	}{{"crashy.git", false}, {"strict.git", true}} {
		t.Run(tc.repo, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(`{"components": [{"module": "crashy$", "name": "crashy", "repo": "` +
				f.gitURL + tc.repo + `", "revision": "` + hash + `"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var msgs []string
			res := f.resolve(t, Options{Config: cfg, Review: ReviewOptions{Disabled: true}, Progress: func(p Progress) {
				mu.Lock()
				msgs = append(msgs, p.Message)
				mu.Unlock()
			}})
			if len(res.Components) != 1 || res.Components[0].Commit != hash || res.Components[0].Origin != "config" {
				t.Fatalf("components %+v problems %+v", res.Components, res.Problems)
			}
			refused := strings.Contains(strings.Join(msgs, "\n"), "fetch by hash refused")
			if refused != tc.wantRefused {
				t.Errorf("fetch by hash refused = %v, want %v", refused, tc.wantRefused)
			}
			got, err := os.ReadFile(filepath.Join(res.Components[0].Checkout, "src/crashy/crash.c"))
			if err != nil || string(got) != gitShow(t, f, hash+":src/crashy/crash.c") {
				t.Errorf("checkout of %s: %v", hash, err)
			}
		})
	}
}

// TestOffline: a second run offline answers from the cache alone; a cold
// cache offline reports a problem instead of touching the network.
func TestOffline(t *testing.T) {
	f := getFixture(t)
	cache := t.TempDir()
	online := f.resolve(t, Options{CacheDir: cache})
	offline := f.resolve(t, Options{CacheDir: cache, Offline: true})
	if len(offline.Components) != 1 || offline.Components[0].Commit != online.Components[0].Commit {
		t.Fatalf("offline components %+v problems %+v", offline.Components, offline.Problems)
	}
	if len(offline.Upstream) != len(online.Upstream) {
		t.Errorf("offline review of %d files, online %d", len(offline.Upstream), len(online.Upstream))
	}
	cold := f.resolve(t, Options{Offline: true})
	if len(cold.Frames) != 0 || len(cold.Problems) == 0 || !strings.Contains(cold.Problems[0].Message, "offline") {
		t.Errorf("cold offline: frames %+v problems %+v", cold.Frames, cold.Problems)
	}
}

// TestSparseCheckout: over the threshold, only the directories frames
// point into are written.
func TestSparseCheckout(t *testing.T) {
	f := getFixture(t)
	res := f.resolve(t, Options{SparseThreshold: 2, Review: ReviewOptions{Disabled: true}})
	c := res.Components[0]
	if !c.Sparse {
		t.Fatalf("component not sparse: %+v", c)
	}
	if _, err := os.Stat(filepath.Join(c.Checkout, "src/crashy/crash.c")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(c.Checkout, "README")); err == nil {
		t.Error("README written in a sparse checkout no frame points at")
	}
}

// TestSourceMapRule: an explicit sourceMap rule wins over suffix matching.
func TestSourceMapRule(t *testing.T) {
	f := getFixture(t)
	local := filepath.Join(f.dir, "build")
	cfg, err := ParseConfig([]byte(`{"components": [], "sourceMap": {"` + buildPrefix + `": "` + local + `"}}`))
	if err != nil {
		t.Fatal(err)
	}
	res := f.resolve(t, Options{Config: cfg, Review: ReviewOptions{Disabled: true}})
	fs := findFrame(t, res, "parse_record")
	if fs.Source != filepath.Join(local, "src/crashy/crash.c") {
		t.Errorf("parse_record source %s", fs.Source)
	}
}
