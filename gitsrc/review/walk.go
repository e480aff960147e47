package review

import (
	"container/heap"
	"context"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The upstream walk lists the commits reachable from the upstream head
// but not from the crashing revision (git rev-list HEAD ^BASE), newest
// first, painting both sides down the History by commit date the way git's
// merge-base code does, so that it stops as soon as only commits reachable
// from the crashing revision remain, without walking all of History (as
// go-git's IsAncestor and path-filtered Log do).

const (
	paintTip  = 1 // reachable from the upstream head
	paintBase = 2 // reachable from the crashing revision
)

type commitQueue []*object.Commit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	return q[i].Committer.When.After(q[j].Committer.When)
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*object.Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

// WalkResult is the outcome of an upstream walk.
type WalkResult struct {
	// Commits after the base, newest first.
	Commits []*object.Commit
	Walked  int
	// Bounded is set when the walk stopped at a bound (count, date window,
	// or the end of the fetched History) rather than at the base.
	Bounded bool
}

// WalkBounds bound an upstream walk: MaxCommits the commits examined,
// Window how long before the crashing revision's date commits are
// followed. Complete says the cache holds all of head's commits that the
// crashing revision does not contain (fetched with deepen-not), so a
// parent missing from it is one the crashing revision contains, not the
// end of what was fetched.
type WalkBounds struct {
	MaxCommits int
	Window     time.Duration
	Complete   bool
	// FetchedAfter: the cache holds only what deepen-not fetched after the
	// crashing revision, so no window is needed (an old side branch merged
	// since is walked whole).
	FetchedAfter bool
}

// CommitsAfter walks from head towards base within bounds. A cancelled ctx
// ends the walk as a bound.
func CommitsAfter(ctx context.Context, repo Repo, head, base *object.Commit, b WalkBounds) WalkResult {
	maxCommits, window := b.MaxCommits, b.Window
	var res WalkResult
	paint := map[plumbing.Hash]uint8{}
	q := &commitQueue{}
	push := func(c *object.Commit, flags uint8) {
		old := paint[c.Hash]
		if old|flags == old {
			return
		}
		paint[c.Hash] = old | flags
		heap.Push(q, c)
	}
	push(head, paintTip)
	push(base, paintBase)
	oldest := base.Committer.When.Add(-window)
	interesting := func() bool {
		for _, c := range *q {
			if paint[c.Hash]&paintBase == 0 {
				return true
			}
		}
		return false
	}
	for n := 0; q.Len() > 0 && interesting(); n++ {
		if n%256 == 0 && ctx.Err() != nil {
			res.Bounded = true
			break
		}
		c := heap.Pop(q).(*object.Commit)
		flags := paint[c.Hash]
		if flags == paintTip {
			res.Walked++
			if res.Walked > maxCommits {
				res.Bounded = true
				break
			}
			res.Commits = append(res.Commits, c)
			if !b.FetchedAfter && c.Committer.When.Before(oldest) {
				res.Bounded = true
				continue
			}
		}
		for _, ph := range c.ParentHashes {
			p, err := repo.Commit(ph)
			if err != nil {
				// Shallow boundary: the fetched History ends here.
				if flags == paintTip && !b.Complete {
					res.Bounded = true
				}
				continue
			}
			push(p, flags)
		}
	}
	// A commit listed before the base's side reached it (clock skew) is not after the base.
	out := res.Commits[:0]
	for _, c := range res.Commits {
		if paint[c.Hash]&paintBase == 0 {
			out = append(out, c)
		}
	}
	res.Commits = out
	return res
}

// IsAncestor reports whether anc is reachable from c (or is c), walking
// c's History newest first and not past commits older than anc by more
// than a day (commit dates are not monotonic, git allows for that slop
// too). known is false when the fetched History ended before an answer
// or ctx was cancelled.
func IsAncestor(ctx context.Context, repo Repo, anc, c *object.Commit, maxCommits int) (included, known bool) {
	if anc.Hash == c.Hash {
		return true, true
	}
	limit := anc.Committer.When.Add(-24 * time.Hour)
	seen := map[plumbing.Hash]bool{c.Hash: true}
	q := &commitQueue{c}
	known = true
	for n := 0; q.Len() > 0; n++ {
		if n > maxCommits || (n%256 == 0 && ctx.Err() != nil) {
			return false, false
		}
		x := heap.Pop(q).(*object.Commit)
		if x.Hash == anc.Hash {
			return true, true
		}
		if x.Committer.When.Before(limit) {
			continue
		}
		for _, ph := range x.ParentHashes {
			if seen[ph] {
				continue
			}
			seen[ph] = true
			if ph == anc.Hash {
				return true, true
			}
			p, err := repo.Commit(ph)
			if err != nil {
				known = false
				continue
			}
			heap.Push(q, p)
		}
	}
	return false, known
}
