package gitsrc

import (
	"context"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// Bounds of one line diff in the upstream review. A commit that rewrites
// a whole large file (a generated file, a reformat) must not cost minutes:
// past maxDiffLines changed lines the changed middle is taken as replaced
// whole, and the diff of a smaller middle stops after maxDiffTime (the
// diff library then returns a coarser but correct edit script).
const (
	maxDiffLines = 20000
	maxDiffTime  = time.Second
)

// boundedLineDiff is a line diff of old and new in time linear in their
// size plus at most maxDiffTime: common leading and trailing lines are
// matched directly, only the middle is diffed, and not at all when it is
// over maxDiffLines lines or ctx is done.
func boundedLineDiff(ctx context.Context, old, new string) []diffmatchpatch.Diff {
	a, b := strings.SplitAfter(old, "\n"), strings.SplitAfter(new, "\n")
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	midA, midB := strings.Join(a[p:len(a)-s], ""), strings.Join(b[p:len(b)-s], "")
	var out []diffmatchpatch.Diff
	add := func(t diffmatchpatch.Operation, text string) {
		if text != "" {
			out = append(out, diffmatchpatch.Diff{Type: t, Text: text})
		}
	}
	add(diffmatchpatch.DiffEqual, strings.Join(a[:p], ""))
	budget := maxDiffTime
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl))
	}
	if len(a)-p-s+len(b)-p-s > maxDiffLines || budget <= 0 || ctx.Err() != nil {
		add(diffmatchpatch.DiffDelete, midA)
		add(diffmatchpatch.DiffInsert, midB)
	} else {
		out = append(out, diff.DoWithTimeout(midA, midB, budget)...)
	}
	add(diffmatchpatch.DiffEqual, strings.Join(a[len(a)-s:], ""))
	return out
}
