// Package review relates a crashing revision to the upstream history after
// it, as git itself would: the commits of the upstream head that the
// crashing revision does not contain (git rev-list HEAD ^BASE, walked
// without reading all of history), those that changed a file (git log
// BASE..HEAD -- FILE, with git's default history simplification), those
// that changed the crashing function (git log -L on the function's lines
// carried to HEAD), and what that says in one sentence.
package review

import (
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Repo is the repository a review reads, by hash. Commits are read many
// times: an implementation remembers them.
type Repo interface {
	Commit(plumbing.Hash) (*object.Commit, error)
	Tree(plumbing.Hash) (*object.Tree, error)
	// Blob returns a file version's content, bounded in size.
	Blob(plumbing.Hash) (string, error)
}
