package gitsrc

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Which upstream commits changed the crashing function is answered as
// `git log -L START,END:FILE BASE..HEAD` answers it (git's line-log.c):
// the function's lines at the upstream head are followed back through
// history, newest first; a commit changed the function when a hunk of its
// diff against its parent touches the lines followed; the lines are then
// mapped onto the parent (the touched hunks' old lines replace their new
// ones, the rest shift). A merge whose lines equal one parent's passes
// them to that parent alone; otherwise to every parent, and it is shown.
// Commits the crashing revision already contains are not examined.

// lineRange is lines [lo, hi) of a file, 0-based.
type lineRange struct{ lo, hi int }

// rangeSet is sorted, non-overlapping, non-empty ranges.
type rangeSet []lineRange

func overlaps(a, b lineRange) bool { return !(a.hi <= b.lo || b.hi <= a.lo) }

// union merges two range sets.
func (rs rangeSet) union(o rangeSet) rangeSet {
	var out rangeSet
	i, j := 0, 0
	for i < len(rs) || j < len(o) {
		var r lineRange
		switch {
		case j >= len(o) || (i < len(rs) && (rs[i].lo < o[j].lo || (rs[i].lo == o[j].lo && rs[i].hi < o[j].hi))):
			r = rs[i]
			i++
		default:
			r = o[j]
			j++
		}
		switch {
		case r.lo == r.hi:
		case len(out) == 0 || out[len(out)-1].hi < r.lo:
			out = append(out, r)
		case out[len(out)-1].hi < r.hi:
			out[len(out)-1].hi = r.hi
		}
	}
	return out
}

// minus removes the lines of o (sorted ranges, possibly empty: the new
// side of a deletion) from rs, as git's range_set_difference does: a
// range is cut where an empty one sits inside it, so the part after the
// cut is shifted past the deletion.
func (rs rangeSet) minus(o []lineRange) rangeSet {
	var out rangeSet
	j := 0
	for _, r := range rs {
		lo, hi := r.lo, r.hi
		for lo < hi {
			for j < len(o) && lo >= o[j].hi {
				j++
			}
			if j >= len(o) || hi <= o[j].lo {
				out = append(out, lineRange{lo, hi})
				break
			}
			if lo >= o[j].lo {
				lo = o[j].hi
			} else if hi > o[j].lo {
				out = append(out, lineRange{lo, o[j].lo})
				lo = o[j].hi
			}
		}
	}
	return out
}

func (rs rangeSet) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%d,%d", r.lo+1, r.hi)
	}
	return strings.Join(parts, " ")
}

// mapAcross maps rs, lines of a commit's file, onto its parent's file
// across the hunks of the diff parent → commit, and returns the hunks that
// touch rs. A hunk touches rs when its new lines overlap a range; a pure
// deletion touches a range it falls strictly inside.
func mapAcross(rs rangeSet, hunks []hunk) (rangeSet, []hunk) {
	var touched []hunk
	var newSide, oldSide []lineRange
	j := 0
	for _, h := range hunks {
		t := lineRange{h.b, h.b + h.nb}
		for j < len(rs) && t.lo >= rs[j].hi {
			j++
		}
		if j == len(rs) {
			break
		}
		if overlaps(t, rs[j]) {
			touched = append(touched, h)
			newSide = append(newSide, t)
			oldSide = append(oldSide, lineRange{h.a, h.a + h.na})
		}
	}
	rest := rs.minus(newSide)
	var shifted rangeSet
	k, offset := 0, 0
	for _, r := range rest {
		for k < len(hunks) && r.lo >= hunks[k].b {
			offset += hunks[k].na - hunks[k].nb
			k++
		}
		shifted = append(shifted, lineRange{r.lo + offset, r.hi + offset})
	}
	return shifted.union(rangeSet(nil).union(oldSide)), touched
}

// mapForward carries ranges of a file's old version onto its new version
// across the hunks old → new: a range keeps its lines, with what replaced
// any of them and what was inserted between two of them; lines inserted
// just before or just after it stay out.
func mapForward(rs rangeSet, hunks []hunk) rangeSet {
	var out rangeSet
	for _, r := range rs {
		lo, hi := forwardStart(r.lo, hunks), forwardEnd(r.hi, hunks)
		if lo < hi {
			out = append(out, lineRange{lo, hi})
		}
	}
	return rangeSet(nil).union(out)
}

// forwardStart maps the line p that starts a range.
func forwardStart(p int, hunks []hunk) int {
	offset := 0
	for _, h := range hunks {
		switch {
		case h.a+h.na <= p && !(h.na == 0 && h.a == p):
			offset += h.nb - h.na
		case h.a <= p && p < h.a+h.na:
			return h.b // line p was replaced: the replacement starts the range
		case h.na == 0 && h.a == p:
			return h.b + h.nb // inserted before the range
		default:
			return p + offset
		}
	}
	return p + offset
}

// forwardEnd maps the end p (exclusive) of a range.
func forwardEnd(p int, hunks []hunk) int {
	offset := 0
	for _, h := range hunks {
		switch {
		case h.na == 0 && h.a == p:
			return h.b // inserted after the range
		case h.a+h.na <= p:
			offset += h.nb - h.na
		case h.a < p:
			return h.b + h.nb // the range's last lines were replaced
		default:
			return p + offset
		}
	}
	return p + offset
}

// fileVersions reads and diffs versions of one file, remembering them:
// the walk asks for the same blobs and pairs more than once.
type fileVersions struct {
	ctx   context.Context
	repo  *repository
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
	s, err := readBlob(fv.repo, h)
	if err != nil && fv.err == nil {
		fv.err = err
	}
	fv.texts[h] = s
	return s
}

// diff is the diff old → new of two blobs (zero: no file).
func (fv *fileVersions) diff(old, new plumbing.Hash) []hunk {
	if old == new {
		return nil
	}
	h, exact := lineDiff(fv.ctx, fv.read(old), fv.read(new))
	if !exact {
		fv.inexact = true
	}
	return h
}

// lineState is what the line walk carries to a commit: the file's path
// there and the lines followed.
type lineState struct {
	path   string
	ranges rangeSet
}

// lineLogResult is what the line walk found.
type lineLogResult struct {
	// changed holds the commits shown, with the hunks of theirs that
	// touched the lines followed (against the parent the lines went to,
	// the first parent for a merge shown).
	changed map[plumbing.Hash][]hunk
	// paths holds the file's path at each commit the walk reached.
	paths map[plumbing.Hash]string
	// missing is set when a parent needed was not in the cache.
	missing bool
}

// lineLog follows ranges of the file at path in head back through the
// commits of after (those not in the crashing revision), newest first in
// topological order.
func lineLog(ctx context.Context, hist *history, fv *fileVersions, path string, ranges rangeSet) (*lineLogResult, error) {
	res := &lineLogResult{changed: map[plumbing.Hash][]hunk{}, paths: map[plumbing.Hash]string{}}
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
				old.ranges = old.ranges.union(pass.state.ranges)
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
func lineStep(hist *history, fv *fileVersions, c *object.Commit, st *lineState, res *lineLogResult) []linePass {
	now := hist.lk.entry(c.TreeHash, st.path)
	if len(c.ParentHashes) == 0 {
		if h := fv.diff(plumbing.ZeroHash, now); len(h) > 0 {
			_, touched := mapAcross(st.ranges, h)
			if len(touched) > 0 {
				res.changed[c.Hash] = touched
			}
		}
		return nil
	}
	passes := make([]linePass, 0, len(c.ParentHashes))
	var firstTouched []hunk
	for i, ph := range c.ParentHashes {
		pc, err := hist.repo.commit(ph)
		if err != nil {
			res.missing = true
			continue
		}
		ppath, prev := parentPath(hist, c, pc, st.path, now)
		mapped, touched := mapAcross(st.ranges, fv.diff(prev, now))
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
func parentPath(hist *history, c, pc *object.Commit, path string, now plumbing.Hash) (string, plumbing.Hash) {
	prev := hist.lk.entry(pc.TreeHash, path)
	if !prev.IsZero() || now.IsZero() {
		return path, prev
	}
	if p, h := renameSource(pc, c, path, now); p != "" {
		return p, h
	}
	return path, prev
}
