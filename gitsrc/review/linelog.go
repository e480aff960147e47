package review

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/faultline-dev/faultline/gitsrc/gitdiff"
)

// Which upstream commits changed the crashing function is answered as
// `git log -L START,END:FILE BASE..HEAD` answers it (git's line-log.c):
// the function's lines at the upstream head are followed back through
// History, newest first; a commit changed the function when a gitdiff.Hunk of its
// diff against its parent touches the lines followed; the lines are then
// mapped onto the parent (the touched hunks' old lines replace their new
// ones, the rest shift). A merge whose lines equal one parent's passes
// them to that parent alone; otherwise to every parent, and it is shown.
// Commits the crashing revision already contains are not examined.

// fileVersions reads and diffs versions of one file, remembering them:
// the walk asks for the same blobs and pairs more than once.
type fileVersions struct {
	ctx   context.Context
	repo  Repo
	texts map[plumbing.Hash]string
	// inexact is set when a diff was bounded (coarser than git's).
	inexact bool
	err     error
}

func (fv *fileVersions) read(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	if s, ok := fv.texts[h]; ok {
		return s
	}
	s, err := fv.repo.Blob(h)
	if err != nil && fv.err == nil {
		fv.err = err
	}
	fv.texts[h] = s
	return s
}

// diff is the diff old → new of two blobs (zero: no file).
func (fv *fileVersions) diff(old, new plumbing.Hash) []gitdiff.Hunk {
	if old == new {
		return nil
	}
	h, exact := gitdiff.Diff(fv.ctx, fv.read(old), fv.read(new))
	if !exact {
		fv.inexact = true
	}
	return h
}

// lineState is what the line walk carries to a commit: the file's path
// there and the lines followed.
type lineState struct {
	path   string
	ranges gitdiff.Ranges
}

// lineLogResult is what the line walk found.
type lineLogResult struct {
	// changed holds the commits shown, with the hunks of theirs that
	// touched the lines followed (against the parent the lines went to,
	// the first parent for a merge shown).
	changed map[plumbing.Hash][]gitdiff.Hunk
	// paths holds the file's path at each commit the walk reached.
	paths map[plumbing.Hash]string
	// missing is set when a parent needed was not in the cache.
	missing bool
}

// lineLog follows ranges of the file at path in head back through the
// commits of after (those not in the crashing revision), newest first in
// topological order.
func lineLog(ctx context.Context, hist *History, fv *fileVersions, path string, ranges gitdiff.Ranges) (*lineLogResult, error) {
	res := &lineLogResult{changed: map[plumbing.Hash][]gitdiff.Hunk{}, paths: map[plumbing.Hash]string{}}
	states := map[plumbing.Hash]*lineState{hist.head.Hash: {path: path, ranges: ranges}}
	for i, c := range hist.topo {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		st := states[c.Hash]
		if st == nil {
			continue
		}
		delete(states, c.Hash)
		res.paths[c.Hash] = st.path
		for _, pass := range lineStep(hist, fv, c, st, res) {
			if !hist.inAfter(pass.parent) {
				continue
			}
			if old := states[pass.parent]; old != nil {
				old.ranges = old.ranges.Union(pass.state.ranges)
			} else {
				states[pass.parent] = pass.state
			}
		}
	}
	return res, fv.err
}

// linePass is lines handed from a commit to one of its parents.
type linePass struct {
	parent plumbing.Hash
	state  *lineState
}

// lineStep processes one commit of the line walk: whether it changed the
// lines followed, and where they go.
func lineStep(hist *History, fv *fileVersions, c *object.Commit, st *lineState, res *lineLogResult) []linePass {
	now := hist.lk.entry(c.TreeHash, st.path)
	if len(c.ParentHashes) == 0 {
		if h := fv.diff(plumbing.ZeroHash, now); len(h) > 0 {
			_, touched := st.ranges.MapBack(h)
			if len(touched) > 0 {
				res.changed[c.Hash] = touched
			}
		}
		return nil
	}
	passes := make([]linePass, 0, len(c.ParentHashes))
	var firstTouched []gitdiff.Hunk
	for i, ph := range c.ParentHashes {
		pc, err := hist.repo.Commit(ph)
		if err != nil {
			res.missing = true
			continue
		}
		ppath, prev := parentPath(hist, c, pc, st.path, now)
		mapped, touched := st.ranges.MapBack(fv.diff(prev, now))
		pass := linePass{parent: ph, state: &lineState{path: ppath, ranges: mapped}}
		if len(touched) == 0 {
			// This parent takes all the blame: follow no other.
			return []linePass{pass}
		}
		if i == 0 {
			firstTouched = touched
		}
		passes = append(passes, pass)
	}
	if len(passes) > 0 {
		res.changed[c.Hash] = firstTouched
	}
	return passes
}

// parentPath is the file's path in parent pc and its blob there: the same
// path, or where a rename in the child came from.
func parentPath(hist *History, c, pc *object.Commit, path string, now plumbing.Hash) (string, plumbing.Hash) {
	prev := hist.lk.entry(pc.TreeHash, path)
	if !prev.IsZero() || now.IsZero() {
		return path, prev
	}
	if p, h := renameSource(pc, c, path, now); p != "" {
		return p, h
	}
	return path, prev
}
