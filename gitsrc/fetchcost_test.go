package gitsrc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// packs lists the pack files of a cached repository.
func packs(t *testing.T, cache, url string) []string {
	t.Helper()
	p, err := filepath.Glob(filepath.Join(cache, "repos", repoKey(url)+".git", "objects", "pack", "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// progressLog records a resolve's progress messages.
type progressLog struct {
	mu   sync.Mutex
	msgs []string
}

func (p *progressLog) report(pr Progress) {
	p.mu.Lock()
	p.msgs = append(p.msgs, pr.Message)
	p.mu.Unlock()
}

func (p *progressLog) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.msgs, "\n")
}

// TestFetchOnlyWhatIsNew (issue 22 item 7): a cold review fetches the
// crashing tag and the upstream commits after it, never the history
// before it; a warm run lists the remote's references and fetches nothing
// when they have not moved; after one new upstream commit it fetches that
// commit alone, and reviews it.
func TestFetchOnlyWhatIsNew(t *testing.T) {
	f := getFixture(t)
	srv := filepath.Join(f.dir, "srv", "moving.git")
	if _, err := run(f.dir, "git", "clone", "-q", "--bare", f.work, srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(srv) })
	url := f.gitURL + "moving.git"
	cfg, err := ParseConfig([]byte(`{"components": [{"module": "crashy$", "name": "crashy", "repo": "` + url + `", "revision": "v1.0"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	cold := &progressLog{}
	res := f.resolve(t, Options{Config: cfg, CacheDir: cache, Progress: cold.report})
	rv := findReview(t, res, "src/crashy/crash.c")
	if len(rv.Commits) != 2 || rv.Touching() != 1 || rv.Bounded || rv.Inexact {
		t.Fatalf("cold review %+v (problems %+v)", rv, res.Problems)
	}
	if !strings.Contains(cold.String(), "(deepen-not)") {
		t.Errorf("the cold fetch did not stop at the tag with deepen-not:\n%s", cold)
	}
	gitDir := filepath.Join(cache, "repos", repoKey(url)+".git")
	if err := exec.Command("git", "-C", gitDir, "cat-file", "-e", f.rev["Initial crashy"]).Run(); err == nil {
		t.Errorf("the commit before v1.0 was fetched")
	}
	coldPacks := packs(t, cache, url)

	warm := &progressLog{}
	again := f.resolve(t, Options{Config: cfg, CacheDir: cache, Progress: warm.report})
	if got := packs(t, cache, url); len(got) != len(coldPacks) || strings.Contains(warm.String(), "since v1.0") {
		t.Errorf("warm run with nothing new upstream: %d packs (cold %d); progress:\n%s", len(got), len(coldPacks), warm)
	}
	if len(findReview(t, again, "src/crashy/crash.c").Commits) != 2 {
		t.Errorf("warm review differs: %+v", again.Upstream)
	}

	// One more upstream commit changing parse_record.
	work := filepath.Join(t.TempDir(), "w")
	for _, args := range [][]string{{"clone", "-q", srv, work}} {
		if out, err := run(f.dir, "git", args...); err != nil {
			t.Fatal(out, err)
		}
	}
	crash := filepath.Join(work, "src/crashy/crash.c")
	src, _ := os.ReadFile(crash)
	os.WriteFile(crash, []byte(strings.Replace(string(src), "\tif (r == NULL)", "\tif (r == NULL || r->value < 0)", 1)), 0o644)
	for _, args := range [][]string{{"-c", "user.name=T", "-c", "user.email=t@example.org", "commit", "-qam", "Reject negative values in parse_record"},
		{"push", "-q", "origin", "main"}} {
		if out, err := run(work, "git", args...); err != nil {
			t.Fatal(out, err)
		}
	}
	newer := f.resolve(t, Options{Config: cfg, CacheDir: cache})
	rv = findReview(t, newer, "src/crashy/crash.c")
	if len(rv.Commits) != 3 || rv.Touching() != 2 || !rv.Commits[1].TouchesFrame || rv.Commits[1].Subject != "Reject negative values in parse_record" {
		t.Errorf("review after the new commit: %+v", rv.Commits)
	}
	got := packs(t, cache, url)
	if len(got) != len(coldPacks)+1 {
		t.Fatalf("%d packs after one new commit, %d before", len(got), len(coldPacks))
	}
	var newest string
	for _, p := range got {
		if !strings.Contains(strings.Join(coldPacks, " "), p) {
			newest = p
		}
	}
	out, err := exec.Command("git", "verify-pack", "-s", newest).Output()
	// One commit, its root tree, src/, src/crashy/, crash.c.
	if err != nil || !strings.Contains(string(out), "non delta: ") || countObjects(string(out)) > 5 {
		t.Errorf("the new pack holds more than the new commit: %s (%v)", out, err)
	}
}

// countObjects sums git verify-pack -s's object counts ("non delta: 4
// objects", "chain length = 1: 1 object").
func countObjects(stat string) int {
	n := 0
	for _, l := range strings.Split(stat, "\n") {
		_, rest, ok := strings.Cut(l, ": ")
		if !ok {
			continue
		}
		if f := strings.Fields(rest); len(f) == 2 && strings.HasPrefix(f[1], "object") {
			k, _ := strconv.Atoi(f[0])
			n += k
		}
	}
	return n
}

// TestMirrorInsteadOf (issue 22 item 8): a rule naming a URL that cannot
// be reached is fetched through the mirror the user's git configuration
// names with url.<base>.insteadOf ($GIT_CONFIG_GLOBAL here); the cache
// and the component keep the URL the rule names. Without the rule, the
// problem says what failed, with no control characters (item 10).
func TestMirrorInsteadOf(t *testing.T) {
	f := getFixture(t)
	const upstream = "https://mirror-test.invalid/upstream/"
	cfg, err := ParseConfig([]byte(`{"components": [{"module": "crashy$", "name": "crashy", "repo": "` + upstream +
		`crashy.git", "revision": "v1.0"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	gitconfig := filepath.Join(t.TempDir(), "gitconfig")
	rules := "[url \"" + f.gitURL + "\"]\n\tinsteadOf = " + upstream + "\n\tpushInsteadOf = " + upstream + "\n" +
		"[url \"https://wrong.invalid/\"]\n\tinsteadOf = https://mirror-test.invalid/\n"
	if err := os.WriteFile(gitconfig, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", gitconfig)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	res := f.resolve(t, Options{Config: cfg})
	if len(res.Components) != 1 || res.Components[0].Repo != upstream+"crashy.git" || len(res.Problems) != 0 {
		t.Fatalf("through the mirror: components %+v problems %+v", res.Components, res.Problems)
	}
	if rv := findReview(t, res, "src/crashy/crash.c"); rv.Touching() != 1 {
		t.Errorf("review through the mirror: %+v", rv)
	}
	// git itself agrees: ls-remote reaches the same repository.
	if out, err := exec.Command("git", "ls-remote", upstream+"crashy.git", "refs/tags/v1.0").Output(); err != nil ||
		!strings.Contains(string(out), "refs/tags/v1.0") {
		t.Errorf("git ls-remote through the same configuration: %s %v", out, err)
	}

	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	res = f.resolve(t, Options{Config: cfg})
	if len(res.Problems) == 0 {
		t.Fatalf("without the mirror: no problem, components %+v", res.Components)
	}
	for _, p := range res.Problems {
		if strings.IndexFunc(p.Message, unicode.IsControl) >= 0 {
			t.Errorf("problem with a control character: %q", p.Message)
		}
	}
}

func TestCleanMessage(t *testing.T) {
	in := "fetching x: unexpected EOF: fatal: protocol error: bad pack header\n  corruption on the remote side.\x00"
	if got, want := cleanMessage(in), "fetching x: unexpected EOF: fatal: protocol error: bad pack header corruption on the remote side."; got != want {
		t.Errorf("cleanMessage = %q, want %q", got, want)
	}
	rules := []urlRewrite{{"git://mirror/", "https://github.com/"}, {"git://zlib-mirror/", "https://github.com/madler/"}}
	for in, want := range map[string]string{
		"https://github.com/madler/zlib": "git://zlib-mirror/zlib",
		"https://github.com/curl/curl":   "git://mirror/curl/curl",
		"https://gitlab.com/x/y":         "https://gitlab.com/x/y",
	} {
		if got := applyRewrites(rules, in); got != want {
			t.Errorf("rewrite %s = %s, want %s", in, got, want)
		}
	}
}
