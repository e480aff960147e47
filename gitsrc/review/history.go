package review

import (
	"path"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// History is the upstream History a review reads: the commits of HEAD
// that the crashing revision BASE does not contain (git rev-list
// HEAD ^BASE), with their order and the file lookups the review shares.
type History struct {
	repo       Repo
	lk         *treeLookup
	head, base *object.Commit
	after      map[plumbing.Hash]*object.Commit
	// topo is after, every commit before its parents, newest first
	// among commits that no order constrains.
	topo []*object.Commit
}

// NewHistory is the history of head after base, from a walk's commits.
func NewHistory(r Repo, head, base *object.Commit, commits []*object.Commit) *History {
	h := &History{repo: r, lk: newTreeLookup(r), head: head, base: base, after: make(map[plumbing.Hash]*object.Commit, len(commits))}
	for _, c := range commits {
		h.after[c.Hash] = c
	}
	h.topo = h.topoOrder(commits)
	return h
}

func (h *History) inAfter(x plumbing.Hash) bool { return h.after[x] != nil }

// relevant is git's relevant_commit for a walk BASE..HEAD: a commit of
// the walk, or BASE itself (the walk's bottom); other commits that BASE
// contains are not.
func (h *History) relevant(x plumbing.Hash) bool { return h.after[x] != nil || x == h.base.Hash }

// topoOrder orders commits (newest first by date) so that every commit
// comes after all its children among them (Kahn's algorithm; commits of
// equal standing keep the date order).
func (h *History) topoOrder(commits []*object.Commit) []*object.Commit {
	children := make(map[plumbing.Hash]int, len(commits))
	for _, c := range commits {
		for _, p := range c.ParentHashes {
			if h.after[p] != nil {
				children[p]++
			}
		}
	}
	out := make([]*object.Commit, 0, len(commits))
	ready := []*object.Commit{}
	// Walk the date order, deferring commits whose children are not out yet.
	pending := map[plumbing.Hash]bool{}
	emit := func(c *object.Commit) {
		out = append(out, c)
		for _, p := range c.ParentHashes {
			if pc := h.after[p]; pc != nil {
				children[p]--
				if children[p] == 0 && pending[p] {
					delete(pending, p)
					ready = append(ready, pc)
				}
			}
		}
	}
	for _, c := range commits {
		if children[c.Hash] > 0 {
			pending[c.Hash] = true
			continue
		}
		emit(c)
		for len(ready) > 0 {
			x := ready[len(ready)-1]
			ready = ready[:len(ready)-1]
			emit(x)
		}
	}
	for _, c := range commits { // cycles cannot happen; keep every commit regardless
		if pending[c.Hash] {
			out = append(out, c)
		}
	}
	return out
}

// chainFromBase is a line of descent BASE → … → HEAD through the walk's
// commits (first parents preferred), or nil when BASE is not an ancestor
// of HEAD (a release branch's tag).
func (h *History) chainFromBase() []*object.Commit {
	child := map[plumbing.Hash]*object.Commit{}
	queue := []*object.Commit{h.head}
	seen := map[plumbing.Hash]bool{h.head.Hash: true}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		for _, p := range c.ParentHashes {
			if seen[p] {
				continue
			}
			seen[p] = true
			if p == h.base.Hash {
				chain := []*object.Commit{h.base}
				for x := c; x != nil; x = child[x.Hash] {
					chain = append(chain, x)
				}
				return chain
			}
			if pc := h.after[p]; pc != nil {
				child[p] = c
				queue = append(queue, pc)
			}
		}
	}
	if h.head.Hash == h.base.Hash {
		return []*object.Commit{h.base}
	}
	return nil
}

// fileChanges lists the commits `git log BASE..HEAD -- PATH` shows, with
// git's default History simplification: a merge whose file equals one of
// its parents' (that parent being part of the walk or BASE) is followed
// through that parent alone, so changes on side branches that the merge
// did not keep are not listed; a commit is listed when its file differs
// from its parents'. paths gives the file's path at commits where it was
// renamed (the line walk's); elsewhere path is used. unknown is set when a
// parent needed was not in the cache (that commit is listed).
func (h *History) fileChanges(p string, paths map[plumbing.Hash]string) (shown map[plumbing.Hash]bool, unknown bool) {
	shown = map[plumbing.Hash]bool{}
	seen := map[plumbing.Hash]bool{}
	stack := []*object.Commit{h.head}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c.Hash] || !h.inAfter(c.Hash) {
			continue
		}
		seen[c.Hash] = true
		cp := p
		if q, ok := paths[c.Hash]; ok {
			cp = q
		}
		kept, changed, missing := h.simplifyCommit(c, cp)
		unknown = unknown || missing
		if changed {
			shown[c.Hash] = true
		}
		for i := len(kept) - 1; i >= 0; i-- {
			if pc := h.after[kept[i]]; pc != nil {
				stack = append(stack, pc)
			}
		}
	}
	return shown, unknown
}

// simplifyCommit is git's try_to_simplify_commit for one commit and one
// file: the parents the walk goes on to, and whether the commit is shown
// (not TREESAME).
func (h *History) simplifyCommit(c *object.Commit, p string) (kept []plumbing.Hash, changed, missing bool) {
	now := h.lk.entry(c.TreeHash, p)
	if len(c.ParentHashes) == 0 {
		return nil, !now.IsZero(), false
	}
	relevantParents := 0
	relevantChange, irrelevantChange := false, false
	for _, ph := range c.ParentHashes {
		rel := h.relevant(ph)
		if rel {
			relevantParents++
		}
		pc, err := h.repo.Commit(ph)
		if err != nil {
			missing = true
			if rel {
				relevantChange = true
			} else {
				irrelevantChange = true
			}
			continue
		}
		if h.lk.entry(pc.TreeHash, p) == now {
			if !rel {
				continue
			}
			return []plumbing.Hash{ph}, false, missing
		}
		if rel {
			relevantChange = true
		} else {
			irrelevantChange = true
		}
	}
	if relevantParents > 0 {
		return c.ParentHashes, relevantChange, missing
	}
	return c.ParentHashes, irrelevantChange, missing
}

// renameSource finds where a file that commit c has at p and its parent
// pc lacks came from: a file of pc that c removed, with the same content,
// else with the same name.
func renameSource(pc, c *object.Commit, p string, blob plumbing.Hash) (string, plumbing.Hash) {
	return matchRename(treeChanges(pc, c), p, blob, func(ch *object.Change) (object.ChangeEntry, object.ChangeEntry) { return ch.From, ch.To })
}

// renameTarget finds where a file that c's parent pc has at p and c lacks
// went: a file c added, with the same content, else with the same name.
func renameTarget(pc, c *object.Commit, p string, blob plumbing.Hash) (string, plumbing.Hash) {
	return matchRename(treeChanges(pc, c), p, blob, func(ch *object.Change) (object.ChangeEntry, object.ChangeEntry) { return ch.To, ch.From })
}

// matchRename looks among the changes whose other side is empty (the
// removals for a source, the additions for a target; sides gives a change's
// side looked at, then its other side) for the file with blob's content,
// else the first with p's base name.
func matchRename(changes object.Changes, p string, blob plumbing.Hash, sides func(*object.Change) (object.ChangeEntry, object.ChangeEntry)) (string, plumbing.Hash) {
	var byName string
	var byNameHash plumbing.Hash
	for _, ch := range changes {
		e, other := sides(ch)
		if other.Name != "" {
			continue // the file is on both sides: not a removal or an addition
		}
		if e.TreeEntry.Hash == blob {
			return e.Name, e.TreeEntry.Hash
		}
		if byName == "" && path.Base(e.Name) == path.Base(p) {
			byName, byNameHash = e.Name, e.TreeEntry.Hash
		}
	}
	return byName, byNameHash
}

func treeChanges(from, to *object.Commit) object.Changes {
	ft, err1 := from.Tree()
	tt, err2 := to.Tree()
	if err1 != nil || err2 != nil {
		return nil
	}
	changes, err := object.DiffTree(ft, tt)
	if err != nil {
		return nil
	}
	return changes
}
