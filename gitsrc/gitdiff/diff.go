// Package gitdiff diffs files by lines exactly as git does before it
// shows a diff without context (xdiff's Myers algorithm with its
// heuristics, common-tail trimming and the sliding of changed runs), and
// carries line ranges across such diffs as `git log -L` does.
package gitdiff

import (
	"context"
	"math"
	"strings"
	"time"
)

// The line diff of the upstream review. It answers the question `git log
// -L` answers — which hunks of a commit touch a range of lines — so it is
// computed the way git computes its diffs: common leading and trailing
// lines matched directly, the middle by Myers' O(ND) algorithm in linear
// space (E. Myers, "An O(ND) Difference Algorithm and Its Variations",
// Algorithmica 1986, §4b), then every run of changed lines slid to the
// position git shows it at (compact). Hunks are pairs of 0-based line
// ranges, as git's Hunk callback reports them with no context.
//
// Bounds: a commit that rewrites a whole large file (a generated file, a
// reformat) must not cost minutes. Past MaxLines changed lines, past
// maxDiffCost edit steps, or after maxDiffTime the remaining middle is
// taken as replaced whole: a coarser but correct edit script.
const (
	MaxLines    = 20000
	maxDiffCost = 1 << 26
	maxDiffTime = time.Second
)

// Hunk is one change: old lines [a, a+na) replaced by new lines [b, b+nb),
// 0-based. A pure insertion has na == 0 and a the old line it goes before.
type Hunk struct {
	A, NA, B, NB int
}

// SplitLines splits a file into lines as git's xdiff does: each line keeps
// its newline, so a last line without one differs from the same text with
// one.
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// Diff diffs two files by lines. exact is false when a bound made
// part of the script coarser than git's.
func Diff(ctx context.Context, oldText, newText string) (hunks []Hunk, exact bool) {
	oldText, newText = trimCommonTail(oldText, newText)
	old, new := SplitLines(oldText), SplitLines(newText)
	ids := map[string]int32{}
	intern := func(ls []string) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	d := &differ{a: intern(old), b: intern(new), ctx: ctx, exact: true, cost: maxDiffCost}
	d.ra, d.rb = make([]bool, len(d.a)+1), make([]bool, len(d.b)+1)
	d.deadline = time.Now().Add(maxDiffTime)
	if dl, ok := ctx.Deadline(); ok && dl.Before(d.deadline) {
		d.deadline = dl
	}
	d.prepare(len(ids))
	d.compare(0, len(d.ka), 0, len(d.kb), false)
	compact(d.a, d.ra, d.rb)
	compact(d.b, d.rb, d.ra)
	return buildHunks(d.ra, d.rb, len(d.a), len(d.b)), d.exact
}

// trimCommonTail drops the identical 1 KiB blocks that end both files,
// but for the rest of the line the first of them starts in, as git does
// before every diff without context lines (xdiff-interface.c): the lines
// dropped then take no part in matching or in sliding changes.
func trimCommonTail(a, b string) (string, string) {
	const blk = 1024
	trimmed := 0
	smaller := min(len(a), len(b))
	for blk+trimmed <= smaller && a[len(a)-trimmed-blk:len(a)-trimmed] == b[len(b)-trimmed-blk:len(b)-trimmed] {
		trimmed += blk
	}
	recovered := 0
	for recovered < trimmed {
		c := a[len(a)-trimmed+recovered]
		recovered++
		if c == '\n' {
			break
		}
	}
	cut := trimmed - recovered
	return a[:len(a)-cut], b[:len(b)-cut]
}

// differ holds one diff's state: the interned lines, the changed flags
// (one extra false entry at the end of each, as a sentinel), the lines
// the edit-path search compares (ka, kb: indexes into a and b), the
// search's diagonal vectors, and the bounds left.
type differ struct {
	a, b     []int32
	ra, rb   []bool
	ka, kb   []int
	vf, vb   []int
	ctx      context.Context
	deadline time.Time
	cost     int
	exact    bool
	// maxCost is the edit cost past which a search settles for the
	// furthest-reaching paths: about the square root of the problem's
	// size, at least 256, as git does unless asked for minimal diffs.
	maxCost int
}

// Constants of the search, as git's xdiff has them.
const (
	heurMinCost = 256  // edit cost past which a long snake may end a search early
	snakeCount  = 20   // lines of a snake that make it long
	kHeur       = 4    // how far a path must have come, per edit, to be taken
	maxEqLimit  = 1024 // cap on the occurrences that make a line common
	scanWindow  = 100  // lines looked at around a common line
	keepRun     = 4    // weight of common lines against unmatched ones around them
)

// Line classes before the search (prepare).
const (
	lineKeep = iota
	lineDiscard
	lineInvestigate
)

// prepare matches the common first and last lines, and of the middle
// marks as changed the lines that occur nowhere in the other file and
// the very common ones (occurring about the square root of the file's
// length times or more) that sit among such lines; the rest are searched.
func (d *differ) prepare(nids int) {
	countA, countB := make([]int32, nids), make([]int32, nids)
	for _, x := range d.a {
		countA[x]++
	}
	for _, x := range d.b {
		countB[x]++
	}
	p := 0
	for p < len(d.a) && p < len(d.b) && d.a[p] == d.b[p] {
		p++
	}
	s := 0
	for s < len(d.a)-p && s < len(d.b)-p && d.a[len(d.a)-1-s] == d.b[len(d.b)-1-s] {
		s++
	}
	d.ka = keepLines(d.a, d.ra, countB, p, len(d.a)-s)
	d.kb = keepLines(d.b, d.rb, countA, p, len(d.b)-s)
	d.maxCost = max(256, int(isqrtApprox(uint64(len(d.ka)+len(d.kb)+3))))
}

// keepLines classifies lines [lo, hi) of one file (other: how often each
// line occurs in the other file), marks the discarded ones changed and
// returns the indexes of the kept ones.
func keepLines(lines []int32, changed []bool, other []int32, lo, hi int) []int {
	limit := min(int(isqrtApprox(uint64(len(lines)))), maxEqLimit)
	class := make([]uint8, hi-lo)
	for i := range class {
		switch n := int(other[lines[lo+i]]); {
		case n == 0:
			class[i] = lineDiscard
		case n < limit:
			class[i] = lineKeep
		default:
			class[i] = lineInvestigate
		}
	}
	kept := make([]int, 0, len(class))
	for i, c := range class {
		if c == lineInvestigate {
			c = lineKeep
			if amongUnmatched(class, i) {
				c = lineDiscard
			}
		}
		if c == lineKeep {
			kept = append(kept, lo+i)
		} else {
			changed[lo+i] = true
		}
	}
	return kept
}

// amongUnmatched decides a common line: it is discarded when the runs of
// unmatched and common lines around it (up to the nearest kept line on
// each side, within scanWindow) hold unmatched lines on both sides, and
// fewer than one common line per keepRun lines of the runs.
func amongUnmatched(class []uint8, i int) bool {
	run := func(step int) (discard, common int) {
		common = 1
		for r := 1; r <= scanWindow; r++ {
			j := i + step*r
			if j < 0 || j >= len(class) || class[j] == lineKeep {
				break
			}
			if class[j] == lineDiscard {
				discard++
			} else {
				common++
			}
		}
		return discard, common
	}
	d0, c0 := run(-1)
	if d0 == 0 {
		return false
	}
	d1, c1 := run(1)
	if d1 == 0 {
		return false
	}
	common, discard := c0+c1, d0+d1
	return common*keepRun < common+discard
}

// isqrtApprox is 2^ceil(bits/2), a power of two near the square root.
func isqrtApprox(n uint64) uint64 {
	i := uint64(1)
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

func (d *differ) ha(i int) int32 { return d.a[d.ka[i]] }
func (d *differ) hb(i int) int32 { return d.b[d.kb[i]] }

// compare marks the changed lines of the kept lines ka[lo1:hi1] against
// kb[lo2:hi2]. needMin asks for a minimal script (no early settling).
func (d *differ) compare(lo1, hi1, lo2, hi2 int, needMin bool) {
	for lo1 < hi1 && lo2 < hi2 && d.ha(lo1) == d.hb(lo2) {
		lo1++
		lo2++
	}
	for lo1 < hi1 && lo2 < hi2 && d.ha(hi1-1) == d.hb(hi2-1) {
		hi1--
		hi2--
	}
	if lo1 == hi1 || lo2 == hi2 || !d.exact || (hi1-lo1)+(hi2-lo2) > MaxLines {
		d.coarse(lo1, hi1, lo2, hi2)
		return
	}
	sp, ok := d.split(lo1, hi1, lo2, hi2, needMin)
	if !ok || (sp.x == lo1 && sp.y == lo2) || (sp.x == hi1 && sp.y == hi2) {
		d.exact = false
		d.coarse(lo1, hi1, lo2, hi2)
		return
	}
	d.compare(lo1, sp.x, lo2, sp.y, sp.minLo)
	d.compare(sp.x, hi1, sp.y, hi2, sp.minHi)
}

// coarse marks kept lines ka[lo1:hi1] and kb[lo2:hi2] changed: all of a
// side that is left alone, or a middle a bound takes as replaced whole.
func (d *differ) coarse(lo1, hi1, lo2, hi2 int) {
	if lo1 != hi1 && lo2 != hi2 {
		d.exact = false
	}
	for i := lo1; i < hi1; i++ {
		d.ra[d.ka[i]] = true
	}
	for i := lo2; i < hi2; i++ {
		d.rb[d.kb[i]] = true
	}
}

// splitPoint is where a search splits a problem, and whether each half
// must then be solved minimally.
type splitPoint struct {
	x, y         int
	minLo, minHi bool
}

// split finds a point on a good edit path from (lo1, lo2) to (hi1, hi2):
// where the furthest-reaching forward and reverse paths (Myers' D-paths,
// kept per diagonal k = x-y within the box, highest diagonal first, a
// deletion preferred on ties) first overlap — the middle snake. Unless
// needMin, a long search settles: past heurMinCost on a path that has come
// far along a long snake, past maxCost on the furthest-reaching path. ok
// is false when faultline's own bounds stopped it.
func (d *differ) split(lo1, hi1, lo2, hi2 int, needMin bool) (splitPoint, bool) {
	dmin, dmax := lo1-hi2, hi1-lo2
	fmid, bmid := lo1-lo2, hi1-hi2
	odd := (fmid-bmid)&1 != 0
	off := 1 - dmin
	size := dmax - dmin + 3
	if cap(d.vf) < size {
		d.vf, d.vb = make([]int, size), make([]int, size)
	}
	s := &search{d: d, vf: d.vf[:size], vb: d.vb[:size], off: off, lo1: lo1, hi1: hi1, lo2: lo2, hi2: hi2,
		dmin: dmin, dmax: dmax, fmid: fmid, bmid: bmid, fmin: fmid, fmax: fmid, bmin: bmid, bmax: bmid}
	s.vf[off+fmid], s.vb[off+bmid] = lo1, hi1
	for ec := 1; ; ec++ {
		d.cost -= 2 * (s.fmax - s.fmin + 2)
		if d.cost < 0 || (ec&63 == 0 && (time.Now().After(d.deadline) || d.ctx.Err() != nil)) {
			return splitPoint{}, false
		}
		snake := false
		if sp, done := s.forward(odd, &snake); done {
			return sp, true
		}
		if sp, done := s.backward(odd, &snake); done {
			return sp, true
		}
		if needMin {
			continue
		}
		if snake && ec > heurMinCost {
			if sp, ok := s.goodSnake(ec); ok {
				return sp, true
			}
		}
		if ec >= d.maxCost {
			return s.furthest(), true
		}
	}
}

// search is one split's state: the forward and reverse vectors (indexed
// by diagonal + off) and the diagonals each has reached.
type search struct {
	d                      *differ
	vf, vb                 []int
	off                    int
	lo1, hi1, lo2, hi2     int
	dmin, dmax, fmid, bmid int
	fmin, fmax, bmin, bmax int
}

// forward extends the forward paths by one edit.
func (s *search) forward(odd bool, snake *bool) (splitPoint, bool) {
	vf, o := s.vf, s.off
	if s.fmin > s.dmin {
		s.fmin--
		vf[o+s.fmin-1] = -1
	} else {
		s.fmin++
	}
	if s.fmax < s.dmax {
		s.fmax++
		vf[o+s.fmax+1] = -1
	} else {
		s.fmax--
	}
	for k := s.fmax; k >= s.fmin; k -= 2 {
		x := vf[o+k+1]
		if vf[o+k-1] >= vf[o+k+1] {
			x = vf[o+k-1] + 1
		}
		start, y := x, x-k
		for x < s.hi1 && y < s.hi2 && s.d.ha(x) == s.d.hb(y) {
			x++
			y++
		}
		if x-start > snakeCount {
			*snake = true
		}
		vf[o+k] = x
		if odd && s.bmin <= k && k <= s.bmax && s.vb[o+k] <= x {
			return splitPoint{x: x, y: y, minLo: true, minHi: true}, true
		}
	}
	return splitPoint{}, false
}

// backward extends the reverse paths by one edit.
func (s *search) backward(odd bool, snake *bool) (splitPoint, bool) {
	vb, o := s.vb, s.off
	if s.bmin > s.dmin {
		s.bmin--
		vb[o+s.bmin-1] = math.MaxInt
	} else {
		s.bmin++
	}
	if s.bmax < s.dmax {
		s.bmax++
		vb[o+s.bmax+1] = math.MaxInt
	} else {
		s.bmax--
	}
	for k := s.bmax; k >= s.bmin; k -= 2 {
		x := vb[o+k+1] - 1
		if vb[o+k-1] < vb[o+k+1] {
			x = vb[o+k-1]
		}
		start, y := x, x-k
		for x > s.lo1 && y > s.lo2 && s.d.ha(x-1) == s.d.hb(y-1) {
			x--
			y--
		}
		if start-x > snakeCount {
			*snake = true
		}
		vb[o+k] = x
		if !odd && s.fmin <= k && k <= s.fmax && x <= s.vf[o+k] {
			return splitPoint{x: x, y: y, minLo: true, minHi: true}, true
		}
	}
	return splitPoint{}, false
}

// goodSnake looks for a path that has come far (more than kHeur lines per
// edit, counted from its corner less its distance from the middle
// diagonal) and ends in snakeCount matching lines: forward paths first.
func (s *search) goodSnake(ec int) (splitPoint, bool) {
	best, sp := 0, splitPoint{}
	for k := s.fmax; k >= s.fmin; k -= 2 {
		x := s.vf[s.off+k]
		y := x - k
		v := (x - s.lo1) + (y - s.lo2) - abs(k-s.fmid)
		if v > kHeur*ec && v > best && s.lo1+snakeCount <= x && x < s.hi1 && s.lo2+snakeCount <= y && y < s.hi2 &&
			s.matchRun(x-snakeCount, y-snakeCount) {
			best, sp = v, splitPoint{x: x, y: y, minLo: true}
		}
	}
	if best > 0 {
		return sp, true
	}
	for k := s.bmax; k >= s.bmin; k -= 2 {
		x := s.vb[s.off+k]
		y := x - k
		v := (s.hi1 - x) + (s.hi2 - y) - abs(k-s.bmid)
		if v > kHeur*ec && v > best && s.lo1 < x && x <= s.hi1-snakeCount && s.lo2 < y && y <= s.hi2-snakeCount &&
			s.matchRun(x, y) {
			best, sp = v, splitPoint{x: x, y: y, minHi: true}
		}
	}
	return sp, best > 0
}

// matchRun reports whether snakeCount lines from (x, y) match.
func (s *search) matchRun(x, y int) bool {
	for j := range snakeCount {
		if s.d.ha(x+j) != s.d.hb(y+j) {
			return false
		}
	}
	return true
}

// furthest settles a search that cost too much: at the furthest-reaching
// forward or reverse path, whichever came further.
func (s *search) furthest() splitPoint {
	fbest, fx := -1, -1
	for k := s.fmax; k >= s.fmin; k -= 2 {
		x := min(s.vf[s.off+k], s.hi1)
		y := x - k
		if s.hi2 < y {
			x, y = s.hi2+k, s.hi2
		}
		if fbest < x+y {
			fbest, fx = x+y, x
		}
	}
	bbest, bx := math.MaxInt, math.MaxInt
	for k := s.bmax; k >= s.bmin; k -= 2 {
		x := max(s.lo1, s.vb[s.off+k])
		y := x - k
		if y < s.lo2 {
			x, y = s.lo2+k, s.lo2
		}
		if x+y < bbest {
			bbest, bx = x+y, x
		}
	}
	if (s.hi1+s.hi2)-bbest < fbest-(s.lo1+s.lo2) {
		return splitPoint{x: fx, y: fbest - fx, minLo: true}
	}
	return splitPoint{x: bx, y: bbest - bx, minHi: true}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// compact slides each run of changed lines of one file (flags r, lines
// recs) as git does before it shows a diff: up as far as it goes, then
// down as far as it goes, merging with runs it meets; it then rests at the
// lowest position where it lines up with a change in the other file
// (flags other), or at the lowest position when there is none. The other
// file's flags are read, never changed: sliding a run over identical lines
// only re-pairs which copy of a line is the unchanged one.
func compact(recs []int32, r, other []bool) {
	n := len(recs)
	g, og := firstGroup(r), firstGroup(other)
	for {
		if g.end != g.start {
			g, og = slideGroup(recs, r, other, g, og, n)
		}
		if g.end >= n {
			return
		}
		g, og = nextGroup(r, g), nextGroup(other, og)
	}
}

// group is a run [start, end) of changed lines, possibly empty; the
// groups of one file alternate with its unchanged lines, and group i of
// one file pairs with group i of the other.
type group struct{ start, end int }

func firstGroup(r []bool) group {
	g := group{}
	for r[g.end] {
		g.end++
	}
	return g
}

func nextGroup(r []bool, g group) group {
	g.start = g.end + 1
	g.end = g.start
	for r[g.end] {
		g.end++
	}
	return g
}

func prevGroup(r []bool, g group) group {
	g.end = g.start - 1
	g.start = g.end
	for g.start > 0 && r[g.start-1] {
		g.start--
	}
	return g
}

// slideGroup moves one non-empty group of changed lines as compact says.
func slideGroup(recs []int32, r, other []bool, g, og group, n int) (group, group) {
	for {
		size := g.end - g.start
		for g.start > 0 && recs[g.start-1] == recs[g.end-1] {
			g.start--
			g.end--
			r[g.start], r[g.end] = true, false
			for g.start > 0 && r[g.start-1] {
				g.start--
			}
			og = prevGroup(other, og)
		}
		matching := -1
		if og.end > og.start {
			matching = g.end
		}
		for g.end < n && recs[g.start] == recs[g.end] {
			r[g.start], r[g.end] = false, true
			g.start++
			g.end++
			for g.end < n && r[g.end] {
				g.end++
			}
			og = nextGroup(other, og)
			if og.end > og.start {
				matching = g.end
			}
		}
		if size == g.end-g.start {
			if matching >= 0 {
				for g.end > matching {
					g.start--
					g.end--
					r[g.start], r[g.end] = true, false
					og = prevGroup(other, og)
				}
			}
			return g, og
		}
	}
}

// buildHunks pairs the changed runs of both files into hunks.
func buildHunks(ra, rb []bool, n, m int) []Hunk {
	var out []Hunk
	i, j := 0, 0
	for i < n || j < m {
		if (i < n && ra[i]) || (j < m && rb[j]) {
			h := Hunk{A: i, B: j}
			for i < n && ra[i] {
				i++
			}
			for j < m && rb[j] {
				j++
			}
			h.NA, h.NB = i-h.A, j-h.B
			out = append(out, h)
			continue
		}
		i++
		j++
	}
	return out
}
