package gitdiff

import (
	"fmt"
	"strings"
)

// Which commits changed a function is answered as `git log -L
// START,END:FILE` answers it (git's line-log.c): the lines followed are a
// set of ranges; a commit's diff touches them when a Hunk's new lines
// overlap one (a pure deletion, when it falls strictly inside one); they
// are carried to the parent by replacing the touched hunks' new lines by
// their old ones and shifting the rest.

// Range is lines [Lo, Hi) of a file, 0-based.
type Range struct{ Lo, Hi int }

// Ranges is sorted, non-overlapping, non-empty ranges.
type Ranges []Range

func overlaps(a, b Range) bool { return !(a.Hi <= b.Lo || b.Hi <= a.Lo) }

// Union merges two range sets.
func (rs Ranges) Union(o Ranges) Ranges {
	var out Ranges
	i, j := 0, 0
	for i < len(rs) || j < len(o) {
		var r Range
		switch {
		case j >= len(o) || (i < len(rs) && (rs[i].Lo < o[j].Lo || (rs[i].Lo == o[j].Lo && rs[i].Hi < o[j].Hi))):
			r = rs[i]
			i++
		default:
			r = o[j]
			j++
		}
		switch {
		case r.Lo == r.Hi:
		case len(out) == 0 || out[len(out)-1].Hi < r.Lo:
			out = append(out, r)
		case out[len(out)-1].Hi < r.Hi:
			out[len(out)-1].Hi = r.Hi
		}
	}
	return out
}

// minus removes the lines of o (sorted ranges, possibly empty: the new
// side of a deletion) from rs, as git's range_set_difference does: a
// range is cut where an empty one sits inside it, so the part after the
// cut is shifted past the deletion.
func (rs Ranges) minus(o []Range) Ranges {
	var out Ranges
	j := 0
	for _, r := range rs {
		lo, hi := r.Lo, r.Hi
		for lo < hi {
			for j < len(o) && lo >= o[j].Hi {
				j++
			}
			if j >= len(o) || hi <= o[j].Lo {
				out = append(out, Range{lo, hi})
				break
			}
			if lo >= o[j].Lo {
				lo = o[j].Hi
			} else if hi > o[j].Lo {
				out = append(out, Range{lo, o[j].Lo})
				lo = o[j].Hi
			}
		}
	}
	return out
}

func (rs Ranges) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%d,%d", r.Lo+1, r.Hi)
	}
	return strings.Join(parts, " ")
}

// MapBack maps rs, lines of a commit's file, onto its parent's file
// across the hunks of the diff parent → commit, and returns the hunks that
// touch rs. A Hunk touches rs when its new lines overlap a range; a pure
// deletion touches a range it falls strictly inside.
func (rs Ranges) MapBack(hunks []Hunk) (Ranges, []Hunk) {
	var touched []Hunk
	var newSide, oldSide []Range
	j := 0
	for _, h := range hunks {
		t := Range{h.B, h.B + h.NB}
		for j < len(rs) && t.Lo >= rs[j].Hi {
			j++
		}
		if j == len(rs) {
			break
		}
		if overlaps(t, rs[j]) {
			touched = append(touched, h)
			newSide = append(newSide, t)
			oldSide = append(oldSide, Range{h.A, h.A + h.NA})
		}
	}
	rest := rs.minus(newSide)
	var shifted Ranges
	k, offset := 0, 0
	for _, r := range rest {
		for k < len(hunks) && r.Lo >= hunks[k].B {
			offset += hunks[k].NA - hunks[k].NB
			k++
		}
		shifted = append(shifted, Range{r.Lo + offset, r.Hi + offset})
	}
	return shifted.Union(Ranges(nil).Union(oldSide)), touched
}

// MapForward carries ranges of a file's old version onto its new version
// across the hunks old → new: a range keeps its lines, with what replaced
// any of them and what was inserted between two of them; lines inserted
// just before or just after it stay out.
func (rs Ranges) MapForward(hunks []Hunk) Ranges {
	var out Ranges
	for _, r := range rs {
		lo, hi := forwardStart(r.Lo, hunks), forwardEnd(r.Hi, hunks)
		if lo < hi {
			out = append(out, Range{lo, hi})
		}
	}
	return Ranges(nil).Union(out)
}

// forwardStart maps the line p that starts a range.
func forwardStart(p int, hunks []Hunk) int {
	offset := 0
	for _, h := range hunks {
		switch {
		case h.A+h.NA <= p && !(h.NA == 0 && h.A == p):
			offset += h.NB - h.NA
		case h.A <= p && p < h.A+h.NA:
			return h.B // line p was replaced: the replacement starts the range
		case h.NA == 0 && h.A == p:
			return h.B + h.NB // inserted before the range
		default:
			return p + offset
		}
	}
	return p + offset
}

// forwardEnd maps the end p (exclusive) of a range.
func forwardEnd(p int, hunks []Hunk) int {
	offset := 0
	for _, h := range hunks {
		switch {
		case h.NA == 0 && h.A == p:
			return h.B // inserted after the range
		case h.A+h.NA <= p:
			offset += h.NB - h.NA
		case h.A < p:
			return h.B + h.NB // the range's last lines were replaced
		default:
			return p + offset
		}
	}
	return p + offset
}

// ChangedBy are the hunks that change lines of rs (old side), or insert
// lines strictly inside one of its ranges.
func (rs Ranges) ChangedBy(hunks []Hunk) []Hunk {
	var out []Hunk
	for _, h := range hunks {
		for _, r := range rs {
			if (h.NA > 0 && overlaps(Range{h.A, h.A + h.NA}, r)) || (h.NA == 0 && r.Lo < h.A && h.A < r.Hi) {
				out = append(out, h)
				break
			}
		}
	}
	return out
}
