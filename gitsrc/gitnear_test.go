package gitsrc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/internal/crashbuild"
)

// TestGitNearRelativeNames (issue 22 item 3): a program compiled as
// `gcc -g src/crash.c` has a relative DWARF file name under
// DW_AT_comp_dir. Built inside a git checkout that tracks the file, the
// checkout is its component (origin git, HEAD) and the frame maps onto
// it, in a worktree of the checkout too; built in a directory of a repository that tracks none of its files
// (a home directory kept in git), no component is guessed and a problem
// says nothing identifies it.
func TestGitNearRelativeNames(t *testing.T) {
	git := func(dir string, args ...string) string {
		t.Helper()
		out, err := run(dir, "git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	open := func(p crashbuild.Program) *analysis.Crash {
		c, err := analysis.Open(p.Core, analysis.Options{Exe: p.Exe, Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	tracked := crashbuild.Build(t, t.TempDir())
	c := open(tracked)
	if fr := findFrameModel(t, c, "crash_here"); fr.File != "src/crash.c" || fr.CompDir != tracked.Dir {
		t.Fatalf("frame file %q comp_dir %q; want the relative name under %s", fr.File, fr.CompDir, tracked.Dir)
	}
	git(tracked.Dir, "init", "-q")
	git(tracked.Dir, "add", "src/crash.c")
	git(tracked.Dir, "commit", "-q", "-m", "crash")
	head := git(tracked.Dir, "rev-parse", "HEAD")
	res := resolveOffline(t, c)
	comp := componentNamed(t, res, filepath.Base(tracked.Dir))
	if comp.Origin != "git" || comp.Repo != tracked.Dir || comp.Commit != head {
		t.Errorf("component %+v; want the checkout %s at HEAD %s", comp, tracked.Dir, head)
	}
	fs := findFrame(t, res, "crash_here")
	if fs.Path != "src/crash.c" || fs.Source != tracked.Source {
		t.Errorf("crash_here → %s (%s); want %s", fs.Source, fs.Path, tracked.Source)
	}

	// Built in a worktree of that repository (git worktree add: .git is a
	// file naming the repository's worktrees/NAME, objects in its commondir).
	wt := filepath.Join(t.TempDir(), "wt")
	git(tracked.Dir, "worktree", "add", "-q", wt)
	inWorktree := crashbuild.Build(t, wt)
	res = resolveOffline(t, open(inWorktree))
	comp = componentNamed(t, res, "wt")
	if comp.Origin != "git" || comp.Repo != wt || comp.Commit != head {
		t.Errorf("worktree: component %+v; want %s at %s", comp, wt, head)
	}
	if fs := findFrame(t, res, "crash_here"); fs.Source != inWorktree.Source {
		t.Errorf("worktree: crash_here → %s; want %s", fs.Source, inWorktree.Source)
	}

	// The build directory lies in a repository that tracks something else.
	home := t.TempDir()
	git(home, "init", "-q")
	if err := os.WriteFile(filepath.Join(home, ".profile"), []byte("export A=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(home, "add", ".profile")
	git(home, "commit", "-q", "-m", "dotfiles")
	untracked := crashbuild.Build(t, filepath.Join(home, "build"))
	res = resolveOffline(t, open(untracked))
	if len(res.Components) != 0 {
		t.Errorf("components %+v from a repository that tracks none of the program's files", res.Components)
	}
	if !problemFor(res, untracked.Exe, "nothing identifies crash") {
		t.Errorf("no problem names the unidentified program: %+v", res.Problems)
	}
}
