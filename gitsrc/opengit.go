package gitsrc

import (
	"os"
	"path/filepath"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	plumbingcache "github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// openGit opens the repository at dir (bare, or a working tree with .git)
// keeping pack file descriptors open: go-git otherwise reopens the pack
// for every object read, which dominates a walk over tens of thousands of
// commits. The returned storage must be closed.
func openGit(dir string) (*git.Repository, *filesystem.Storage, error) {
	gitDir, work := dir, ""
	if st, err := os.Stat(filepath.Join(dir, ".git")); err == nil && st.IsDir() {
		gitDir, work = filepath.Join(dir, ".git"), dir
	}
	if _, err := os.Stat(filepath.Join(gitDir, "objects")); err != nil {
		return nil, nil, git.ErrRepositoryNotExists
	}
	st := filesystem.NewStorageWithOptions(osfs.New(gitDir), plumbingcache.NewObjectLRUDefault(),
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

// close releases the repository's open pack files.
func (r *repository) close() {
	if r != nil && r.storage != nil {
		r.storage.Close()
		r.storage = nil
	}
}

// commit returns a decoded commit, remembering it: the walk and the
// per-file review read the same commits.
func (r *repository) commit(h plumbing.Hash) (*object.Commit, error) {
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
