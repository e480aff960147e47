package gitsrctest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// An upstream history built from Debian's sources: the upstream releases
// as tagged commits (upstream tag names, upstream default branch), and
// between them the upstream fixes Debian applied, each a commit with its
// upstream author, date and message and the upstream commit it is quoted
// from. The commits get new hashes, but the files, lines and messages are
// upstream's: what git log and git log -L say on it is what the review
// must say.

// Release is an upstream release: the tree of a Debian .orig tarball.
type Release struct {
	Tag     string
	Orig    DebianFile
	Author  string // "Name <email>"
	Date    string // as git accepts it
	Message string
}

// Fix is an upstream fix that Debian applied: a patch of its patch set
// (debian/patches/Name in Set), with From:, Date:, Subject: headers and an
// Origin: naming the upstream commit.
type Fix struct {
	Set  DebianFile
	Name string
}

// Step is one commit of the history: a release or a fix.
type Step struct {
	Release *Release
	Fix     *Fix
}

// History describes an upstream history to build.
type History struct {
	Name   string // served as NAME.git
	Branch string // the default branch
	Steps  []Step
}

// historyVersion changes when Build's output would change.
const historyVersion = "1"

// Build builds the history into the test cache (once per set of inputs)
// and returns the directory holding work/ (a repository with the whole
// history) and srv/NAME.git (bare, HEAD at the default branch: what a
// git daemon serves).
func (h History) Build() (string, error) {
	root, err := CacheRoot()
	if err != nil {
		return "", err
	}
	key := sha256.New()
	fmt.Fprintf(key, "%s %s %s\n", historyVersion, h.Name, h.Branch)
	for _, s := range h.Steps {
		if s.Release != nil {
			fmt.Fprintf(key, "release %+v\n", *s.Release)
		} else {
			fmt.Fprintf(key, "fix %+v\n", *s.Fix)
		}
	}
	dir := filepath.Join(root, "upstreams", h.Name+"-"+hex.EncodeToString(key.Sum(nil))[:16])
	return dir, cachedDir(dir, func() error { return h.build(dir) })
}

// cachedDir runs make into dir unless a finished dir is there, under a
// lock that serialises test processes.
func cachedDir(dir string, make func() error) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := make(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644)
}

func (h History) build(dir string) error {
	work := filepath.Join(dir, "work")
	if _, err := Run(dir, "git", "init", "-q", "-b", h.Branch, work); err != nil {
		return err
	}
	if _, err := Run(work, "git", "config", "core.autocrlf", "false"); err != nil {
		return err
	}
	sets := map[string]string{} // patch sets extracted, by file name
	for _, s := range h.Steps {
		var err error
		if s.Release != nil {
			err = addRelease(work, s.Release)
		} else {
			err = addFix(dir, work, s.Fix, sets)
		}
		if err != nil {
			return err
		}
	}
	srv := filepath.Join(dir, "srv", h.Name+".git")
	if _, err := Run(dir, "git", "clone", "-q", "--bare", work, srv); err != nil {
		return err
	}
	_, err := Run(srv, "git", "symbolic-ref", "HEAD", "refs/heads/"+h.Branch)
	return err
}

// commitEnv makes a commit by author at date, committed then too.
func commitEnv(author, date string) []string {
	name, email, _ := strings.Cut(strings.TrimSuffix(author, ">"), " <")
	return append(os.Environ(), "GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email, "GIT_AUTHOR_DATE="+date,
		"GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email, "GIT_COMMITTER_DATE="+date)
}

func runEnv(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// addRelease replaces the tree by the release's and tags it.
func addRelease(work string, r *Release) error {
	orig, err := r.Orig.Fetch()
	if err != nil {
		return err
	}
	if _, err := Run(work, "git", "rm", "-rqf", "--ignore-unmatch", "."); err != nil {
		return err
	}
	if _, err := Run(work, "tar", "-xf", orig, "--strip-components=1"); err != nil {
		return err
	}
	env := commitEnv(r.Author, r.Date)
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "--allow-empty", "-m", r.Message},
		{"tag", "-a", r.Tag, "-m", r.Message}} {
		if err := runEnv(work, env, "git", args...); err != nil {
			return err
		}
	}
	return nil
}

// addFix applies a fix of a Debian patch set as the upstream commit it is.
func addFix(dir, work string, f *Fix, sets map[string]string) error {
	set, ok := sets[f.Set.Name]
	if !ok {
		tarball, err := f.Set.Fetch()
		if err != nil {
			return err
		}
		set = filepath.Join(dir, "sets", f.Set.Name)
		if err := os.MkdirAll(set, 0o755); err != nil {
			return err
		}
		if _, err := Run(set, "tar", "-xf", tarball); err != nil {
			return err
		}
		sets[f.Set.Name] = set
	}
	patch := filepath.Join(set, "debian", "patches", f.Name)
	p, err := readPatch(patch)
	if err != nil {
		return err
	}
	if _, err := Run(work, "git", "apply", "-p1", "--whitespace=nowarn", patch); err != nil {
		return err
	}
	env := commitEnv(p.author, p.date)
	if err := runEnv(work, env, "git", "add", "-A"); err != nil {
		return err
	}
	return runEnv(work, env, "git", "commit", "-q", "-m", p.message)
}

// patchHeader is what a Debian patch says of the upstream commit.
type patchHeader struct {
	author, date, message string
}

// readPatch reads a patch's From:, Date:, Subject: and Origin: headers
// and its description: the upstream commit's message, with the upstream
// hash quoted at the end.
func readPatch(path string) (patchHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return patchHeader{}, err
	}
	defer f.Close()
	var p patchHeader
	var subject, origin string
	var body []string
	inBody := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		// git format-patch's first line names the commit.
		if h, ok := strings.CutPrefix(l, "From "); ok && !inBody && len(h) > 40 && strings.HasSuffix(h, " Mon Sep 17 00:00:00 2001") {
			origin = "/commit/" + h[:40]
			continue
		}
		if !inBody {
			switch k, v, _ := strings.Cut(l, ": "); k {
			case "From":
				p.author = v
			case "Date":
				p.date = v
			case "Subject":
				subject = strings.TrimPrefix(v, "[PATCH] ")
			case "Origin":
				origin = v
			case "":
				inBody = l == ""
			}
			continue
		}
		if l == "---" || strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "Index: ") {
			break
		}
		body = append(body, l)
	}
	if p.author == "" || p.date == "" || subject == "" || !strings.Contains(origin, "/commit/") {
		return p, fmt.Errorf("%s: not an upstream fix with From, Date, Subject and the upstream commit (Origin: or format-patch's first line)", path)
	}
	hash := origin[strings.LastIndex(origin, "/")+1:]
	p.message = subject + "\n\n" + strings.TrimSpace(strings.Join(body, "\n")) + "\n\n(upstream commit " + hash + ")\n"
	return p, sc.Err()
}

// MustRun is Run for tests: it fails t on error.
func MustRun(t testing.TB, dir, name string, args ...string) string {
	t.Helper()
	out, err := Run(dir, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
