package review

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/faultline-dev/faultline/gitsrc/gitdiff"
	"github.com/faultline-dev/faultline/gitsrc/srcfunc"
)

// treeLookup finds file entries in trees, remembering each subtree's
// answer: consecutive commits share almost all their subtrees, so one
// file's entry over tens of thousands of commits costs little more than
// decoding each root tree once.
type treeLookup struct {
	repo Repo
	memo map[lookupKey]plumbing.Hash
}

type lookupKey struct {
	tree plumbing.Hash
	path string
}

func newTreeLookup(r Repo) *treeLookup {
	return &treeLookup{repo: r, memo: map[lookupKey]plumbing.Hash{}}
}

// entry returns the blob hash of path in tree, or ZeroHash when absent.
func (l *treeLookup) entry(tree plumbing.Hash, p string) plumbing.Hash {
	k := lookupKey{tree, p}
	if h, ok := l.memo[k]; ok {
		return h
	}
	var h plumbing.Hash
	if t, err := l.repo.Tree(tree); err == nil {
		first, rest, sub := strings.Cut(p, "/")
		for _, e := range t.Entries {
			if e.Name != first {
				continue
			}
			if sub {
				if !e.Mode.IsFile() {
					h = l.entry(e.Hash, rest)
				}
			} else if e.Mode.IsFile() {
				h = e.Hash
			}
			break
		}
	}
	l.memo[k] = h
	return h
}

// Extent origins: where FileReview.FunctionStart and FunctionEnd came from.
const (
	// ExtentBinary: the function's DW_AT_decl_line to the last line its
	// code covers in the line table (per inline instance).
	ExtentBinary = "binary"
	// ExtentSource: the function's definition found in the source.
	ExtentSource = "source"
)

// FuncSpec is what the review knows of the crashing function: its name,
// the frame's line, and its extent from the binary when there is one.
type FuncSpec struct {
	Name string
	Line int
	// DeclFile, DeclLine and LastLine are the binary's extent (0: none).
	DeclFile           string
	DeclLine, LastLine int
}

// extentAt decides the function's lines [start, end] in src, the file at
// the crashing revision (path p): the binary's extent when it names this
// file and holds the frame's line, else the definition parsed from the
// source, else none (origin "").
func (fs FuncSpec) extentAt(src []string, p string) (start, end int, origin string) {
	if fs.DeclLine > 0 && fs.DeclLine <= fs.Line && fs.Line <= fs.LastLine && fs.LastLine <= len(src) &&
		sameFile(fs.DeclFile, p) {
		return fs.DeclLine, fs.LastLine, ExtentBinary
	}
	if lo, hi, ok := srcfunc.Range(src, fs.Line, fs.Name); ok {
		return lo, hi, ExtentSource
	}
	return fs.Line, fs.Line, ""
}

// sameFile reports whether a DWARF file name (absolute, or relative to
// the build directory) names the repository path p.
func sameFile(dwarfName, p string) bool {
	if dwarfName == "" {
		return true
	}
	return dwarfName == p || strings.HasSuffix(dwarfName, "/"+p) || strings.HasSuffix(p, "/"+strings.TrimPrefix(dwarfName, "./"))
}

// ReviewFile lists the upstream commits of hist that changed the file at
// p (its path at the crashing revision), as `git log BASE..HEAD -- FILE`
// does, and marks those that changed the function's lines, as `git log -L`
// does for the function's extent carried to HEAD. A cancelled ctx ends it
// with ctx's error.
func (hist *History) ReviewFile(ctx context.Context, p string, fn FuncSpec) (*FileReview, error) {
	baseBlob := hist.lk.entry(hist.base.TreeHash, p)
	if baseBlob.IsZero() {
		return nil, fmt.Errorf("%s is not in %s", p, hist.base.Hash)
	}
	fv := &fileVersions{ctx: ctx, repo: hist.repo, texts: map[plumbing.Hash]string{}}
	src := gitdiff.SplitLines(fv.read(baseBlob))
	if fv.err != nil {
		return nil, fv.err
	}
	lo, hi, origin := fn.extentAt(src, p)
	fr := &FileReview{Path: p, Function: fn.Name, FunctionStart: lo, FunctionEnd: hi, Extent: origin, Line: fn.Line,
		Commits: []ReviewCommit{}}
	headPath, headRanges, forward := forwardRanges(hist, fv, p, gitdiff.Ranges{{Lo: lo - 1, Hi: hi}})
	if headPath == "" {
		headPath = p
	}
	fr.HeadPath = headPath
	ll := &lineLogResult{changed: map[plumbing.Hash][]gitdiff.Hunk{}, paths: map[plumbing.Hash]string{}}
	switch {
	case origin == "":
	case headRanges == nil:
		// BASE is not an ancestor of HEAD: find the function at HEAD by name.
		headRanges = rangesByName(hist, fv, headPath, fn)
	case len(headRanges) == 0:
		// The function is gone at HEAD: the commits that changed it on
		// the way are what git cannot follow back.
		fr.FunctionGone = true
		ll.changed = forward
	}
	if origin != "" && len(headRanges) > 0 {
		var err error
		if ll, err = lineLog(ctx, hist, fv, headPath, headRanges); err != nil {
			return nil, err
		}
		for _, r := range headRanges {
			fr.HeadLines = append(fr.HeadLines, [2]int{r.Lo + 1, r.Hi})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	shown, unknown := hist.fileChanges(headPath, ll.paths)
	fr.Inexact = unknown || ll.missing || fv.inexact
	for _, c := range hist.topoByDate() {
		hunks, touches := ll.changed[c.Hash]
		if !shown[c.Hash] && !touches {
			continue
		}
		fr.Commits = append(fr.Commits, reviewCommit(hist, fv, c, p, ll, touches, hunks))
	}
	rankCommits(fr.Commits)
	return fr, nil
}

// reviewCommit describes one commit of a file review.
func reviewCommit(hist *History, fv *fileVersions, c *object.Commit, p string, ll *lineLogResult, touches bool, hunks []gitdiff.Hunk) ReviewCommit {
	rc := ReviewCommit{Commit: c.Hash.String(), Subject: Subject(c.Message), Date: c.Committer.When.UTC(),
		Author: c.Author.Name, Message: c.Message, TouchesFrame: touches}
	cp := p
	if q, ok := ll.paths[c.Hash]; ok {
		cp = q
		if q != p {
			rc.Path = q
		}
	}
	if touches && len(hunks) > 0 && len(c.ParentHashes) > 0 {
		if pc, err := hist.repo.Commit(c.ParentHashes[0]); err == nil {
			_, prev := parentPath(hist, c, pc, cp, hist.lk.entry(c.TreeHash, cp))
			rc.Hunk = renderHunks(gitdiff.SplitLines(fv.read(prev)), gitdiff.SplitLines(fv.read(hist.lk.entry(c.TreeHash, cp))), hunks)
		}
	}
	return rc
}

// topoByDate is the walk's commits newest first by commit date.
func (h *History) topoByDate() []*object.Commit {
	out := append([]*object.Commit(nil), h.topo...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Committer.When.After(out[j].Committer.When) })
	return out
}

// forwardRanges carries ranges of the file at p in BASE down a line of
// descent to HEAD (following renames), giving the file's path and the
// ranges there, and the commits of that line whose changes touched the
// ranges. The ranges are nil when BASE is not an ancestor of HEAD, empty
// when the lines went away (the function was removed or moved out).
func forwardRanges(hist *History, fv *fileVersions, p string, ranges gitdiff.Ranges) (string, gitdiff.Ranges, map[plumbing.Hash][]gitdiff.Hunk) {
	chain := hist.chainFromBase()
	if chain == nil {
		return "", nil, nil
	}
	touched := map[plumbing.Hash][]gitdiff.Hunk{}
	for i := 1; i < len(chain) && len(ranges) > 0; i++ {
		parent, child := chain[i-1], chain[i]
		prev := hist.lk.entry(parent.TreeHash, p)
		now := hist.lk.entry(child.TreeHash, p)
		if now.IsZero() {
			np, nh := renameTarget(parent, child, p, prev)
			if np == "" {
				touched[child.Hash] = nil
				return p, gitdiff.Ranges{}, touched
			}
			p, now = np, nh
		}
		if prev != now {
			hunks := fv.diff(prev, now)
			if t := ranges.ChangedBy(hunks); len(t) > 0 {
				touched[child.Hash] = t
			}
			ranges = ranges.MapForward(hunks)
		}
	}
	return p, ranges, touched
}

// rangesByName finds the function at HEAD by its name (the source
// fallback), for when BASE is not an ancestor of HEAD.
func rangesByName(hist *History, fv *fileVersions, p string, fn FuncSpec) gitdiff.Ranges {
	src := gitdiff.SplitLines(fv.read(hist.lk.entry(hist.head.TreeHash, p)))
	for line := len(src); line >= 1; line-- {
		if at, col := srcfunc.NamedCall(src[line-1], srcfunc.ShortName(fn.Name)); col >= 0 && srcfunc.DeclaratorPrefix(src[line-1][:at]) {
			if lo, hi, ok := srcfunc.Range(src, line, fn.Name); ok && lo == line {
				return gitdiff.Ranges{{Lo: lo - 1, Hi: hi}}
			}
		}
	}
	return nil
}

// renderHunks renders hunks as unified diff text (no context), capped.
func renderHunks(old, new []string, hunks []gitdiff.Hunk) string {
	var b strings.Builder
	for _, h := range hunks {
		if b.Len() > 4096 {
			break
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", unifiedRange(h.A, h.NA), unifiedRange(h.B, h.NB))
		for i := h.A; i < h.A+h.NA && i < len(old); i++ {
			b.WriteString("-" + strings.TrimSuffix(old[i], "\n") + "\n")
		}
		for i := h.B; i < h.B+h.NB && i < len(new); i++ {
			b.WriteString("+" + strings.TrimSuffix(new[i], "\n") + "\n")
		}
	}
	return b.String()
}

// unifiedRange is a gitdiff.Hunk side as a unified diff header writes it.
func unifiedRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
