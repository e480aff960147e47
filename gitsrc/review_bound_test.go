package gitsrc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// TestBoundReviewDiffBomb (issue 18 item 5): a clone of the fixture
// repository whose main branch gains two commits rewriting the crashing
// file (crash.c) with 160,000 different lines each. `faultline sources`
// reviews it within a time bound; before the fix each diff ran with
// go-git's one-hour timeout.
func TestBoundReviewDiffBomb(t *testing.T) {
	f := getFixture(t)
	repo := filepath.Join(t.TempDir(), "crashy")
	if _, err := run(f.dir, "git", "clone", "-q", f.work, repo); err != nil {
		t.Fatal(err)
	}
	for i, seed := range []string{"alpha", "omega"} {
		var b strings.Builder
		for j := range 160000 {
			fmt.Fprintf(&b, "int %s_%d = %d;\n", seed, j, j*7+i)
		}
		if err := os.WriteFile(filepath.Join(repo, "src/crashy/crash.c"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := run(repo, "git", "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qam", "Rewrite crash.c ("+seed+")"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := run(repo, "git", "update-ref", "refs/remotes/origin/main", "HEAD"); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "cfg.json")
	rule := `{"components": [{"module": "crashy$", "name": "crashy", "repo": "` + repo + `", "revision": "v1.0"}]}`
	if err := os.WriteFile(cfg, []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"sources", "--json", "--quiet", "--offline", "--branch", "main",
		"--config", cfg, "--cache-dir", t.TempDir(), "--exe", f.exe, f.core},
		Limits: boundtest.Limits{Wall: 90 * time.Second, RSSKiB: 1536 << 10}})
	if r.Killed != "" || r.Exit != 0 {
		t.Fatalf("%v\n%s", r, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "Rewrite crash.c (omega)") {
		t.Errorf("the review does not list the rewrites:\n%.3000s", r.Stdout)
	}
	if r.CPUTime > 15*time.Second || r.Wall > 90*time.Second || r.MaxRSSKiB > 600<<10 {
		t.Errorf("bound: cpu <= 15 s, wall <= 45 s, maxrss <= 600 MiB; got %v", r)
	}
}
