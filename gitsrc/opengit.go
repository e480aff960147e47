package gitsrc

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	plumbingcache "github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// openGit opens the repository at dir (bare, or a working tree with .git)
// keeping pack file descriptors open: go-git otherwise reopens the pack
// for every object read, which dominates a walk over tens of thousands of
// commits. The returned storage must be closed.
func openGit(dir string) (*git.Repository, *filesystem.Storage, error) {
	gitDir, common, work := dir, dir, ""
	if g, c, ok := workingGitDir(dir); ok {
		gitDir, common, work = g, c, dir
	}
	if _, err := os.Stat(filepath.Join(common, "objects")); err != nil {
		return nil, nil, git.ErrRepositoryNotExists
	}
	var fs billy.Filesystem = osfs.New(gitDir)
	if common != gitDir {
		fs = dotgit.NewRepositoryFilesystem(fs, osfs.New(common))
	}
	st := filesystem.NewStorageWithOptions(fs, plumbingcache.NewObjectLRUDefault(),
		filesystem.Options{KeepDescriptors: true})
	var r *git.Repository
	var err error
	if work != "" {
		r, err = git.Open(st, osfs.New(work))
	} else {
		r, err = git.Open(st, nil)
	}
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return r, st, nil
}

// workingGitDir finds the git directory of the working tree at dir: its
// .git directory, or the directory a .git file names ("gitdir: …", a
// worktree made by git worktree add, a submodule), with the common
// directory holding objects and refs a worktree shares (its commondir).
func workingGitDir(dir string) (gitDir, common string, ok bool) {
	dot := filepath.Join(dir, ".git")
	st, err := os.Stat(dot)
	switch {
	case err != nil:
		return "", "", false
	case st.IsDir():
		return dot, dot, true
	case !st.Mode().IsRegular() || st.Size() > 4096:
		return "", "", false
	}
	b, err := os.ReadFile(dot)
	if err != nil {
		return "", "", false
	}
	target, found := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !found {
		return "", "", false
	}
	gitDir = strings.TrimSpace(target)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(dir, gitDir)
	}
	common = gitDir
	if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil && len(c) < 4096 {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
	}
	return gitDir, filepath.Clean(common), true
}

// close releases the repository's open pack files.
func (r *repository) close() {
	if r != nil && r.storage != nil {
		r.storage.Close()
		r.storage = nil
	}
}

// Commit returns a decoded commit, remembering it: the walk and the
// per-file review read the same commits (review.Repo).
func (r *repository) Commit(h plumbing.Hash) (*object.Commit, error) {
	if c, ok := r.commits[h]; ok {
		return c, nil
	}
	c, err := r.git.CommitObject(h)
	if err != nil {
		return nil, err
	}
	if r.commits == nil {
		r.commits = map[plumbing.Hash]*object.Commit{}
	}
	r.commits[h] = c
	return c, nil
}

// Tree returns a decoded tree (review.Repo).
func (r *repository) Tree(h plumbing.Hash) (*object.Tree, error) { return r.git.TreeObject(h) }

// Blob returns a file version's content, at most maxReviewBlob bytes
// (review.Repo).
func (r *repository) Blob(h plumbing.Hash) (string, error) { return readBlob(r, h) }

// reopen opens the cached repository again, so that packs written beside
// go-git's storage (packindex) are seen. Decoded commits are dropped: they
// read their trees through the storage they came from.
func (r *repository) reopen() error {
	if r.dir == "" {
		return nil
	}
	g, st, err := openGit(r.dir)
	if err != nil {
		return err
	}
	r.close()
	r.git, r.storage, r.commits = g, st, nil
	return nil
}
