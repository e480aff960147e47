package server

import (
	"fmt"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/gitsrc"
)

// The upstream review of faultline.fetchSources (gitsrc.FileReview): for
// the culprit frame's function and its nearest callers, in the checkout of
// the crashing revision, the commits of the upstream branch that changed
// the file since. The function gets a lens "N upstream commits changed
// this function since REV — SUBJECT" whose command writes and opens the
// top commit's patch (faultline.showCommit), and a hover over its lines
// with the commits' messages and hunks.

// maxHoverCommits caps the commits a hover details (the rest are listed).
const maxHoverCommits = 6

// maxHoverMessage caps one commit message in a hover.
const maxHoverMessage = 2000

// upstreamFunc is one reviewed function placed in a local checkout file.
type upstreamFunc struct {
	path       string // local file (symlinks resolved)
	start, end int    // 1-based lines of the function at the crashing revision
	review     *gitsrc.FileReview
	repo       string // the component's repository URL
}

// placeUpstream records the reviews of fetched sources by local file.
func (v *view) placeUpstream(fs *fetchedSources) {
	if fs == nil || fs.result == nil {
		return
	}
	repos := map[string]string{}
	for _, c := range fs.result.Components {
		repos[c.Name] = c.Repo
	}
	for i := range fs.result.Upstream {
		r := &fs.result.Upstream[i]
		if r.Source == "" || r.FunctionStart <= 0 {
			continue
		}
		p := abs(r.Source)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		f := upstreamFunc{path: p, start: r.FunctionStart, end: max(r.FunctionEnd, r.FunctionStart), review: r,
			repo: repos[r.Component]}
		v.upstream[p] = append(v.upstream[p], f)
	}
}

// upstreamAt returns the reviewed functions spanning line k.
func (v *view) upstreamAt(k lineKey) []upstreamFunc {
	var out []upstreamFunc
	for _, f := range v.upstream[k.path] {
		if line := int(k.line) + 1; line >= f.start && line <= f.end {
			out = append(out, f)
		}
	}
	return out
}

// touching counts the commits that changed the function itself.
func (f upstreamFunc) touching() int { return f.review.Touching() }

// revision names the crashing revision for titles: the tag or branch, or
// a short hash.
func (f upstreamFunc) revision() string { return f.review.RevisionLabel() }

// upstreamLenses are the lenses on the first line of each reviewed
// function of path, saying what the review found as the report says it
// ("2 upstream commits since v1.2.12 changed inflate(): eff308af Fix …").
// Commits are ranked, those touching the function first, so the lens
// opens the most likely fix.
func (v *view) upstreamLenses(path string) []protocol.CodeLens {
	var out []protocol.CodeLens
	for _, f := range v.upstream[path] {
		if len(f.review.Commits) == 0 {
			continue
		}
		top := f.review.Commits[0]
		line := uint32(f.start - 1)
		r := protocol.Range{Start: protocol.Position{Line: line}, End: protocol.Position{Line: line}}
		out = append(out, lens(r, f.review.Summary(1), CommandShowCommit, ShowCommitArgs{Repo: f.repo, Commit: top.Commit}))
	}
	return out
}

// markdown is the hover section of a reviewed function: each commit's
// subject, date, author and fix keywords, its full message, and the hunks
// that changed the function.
func (f upstreamFunc) markdown() string {
	r := f.review
	var b strings.Builder
	fn := r.Function
	if fn == "" {
		fn = "this function"
	} else {
		fn = "`" + fn + "`"
	}
	fmt.Fprintf(&b, "**Upstream** · %s since `%s`", fn, f.revision())
	if r.Branch != "" {
		fmt.Fprintf(&b, " on `%s`", r.Branch)
	}
	fmt.Fprintf(&b, " (%s)\n\n", r.Component)
	fmt.Fprintf(&b, "%s (%d upstream commits examined", strings.TrimSuffix(r.Summary(maxHoverCommits), "."), r.Walked)
	if cmd := r.GitLogL(); cmd != "" {
		fmt.Fprintf(&b, "; the function's commits are those of `%s`", cmd)
	}
	b.WriteString(").\n\n")
	for i, c := range r.Commits {
		if i == maxHoverCommits {
			fmt.Fprintf(&b, "… and %d more.\n\n", len(r.Commits)-i)
			break
		}
		fmt.Fprintf(&b, "#### `%s` %s\n\n", shortCommit(c.Commit), c.Subject)
		meta := []string{c.Date.Format("2006-01-02")}
		if c.Author != "" {
			meta = append(meta, c.Author)
		}
		switch {
		case c.TouchesFrame:
			meta = append(meta, "changes the function")
		case r.Extent == "":
			meta = append(meta, "changes the file")
		default:
			meta = append(meta, "changes the file only")
		}
		if len(c.Keywords) > 0 {
			meta = append(meta, "keywords: "+strings.Join(c.Keywords, ", "))
		}
		if c.Path != "" {
			meta = append(meta, "file now at `"+c.Path+"`")
		}
		b.WriteString(strings.Join(meta, " · ") + "\n\n")
		if msg := strings.TrimSpace(c.Message); msg != "" {
			if len(msg) > maxHoverMessage {
				msg = msg[:maxHoverMessage] + "…"
			}
			fmt.Fprintf(&b, "```text\n%s\n```\n\n", fenceSafe(msg))
		}
		if c.Hunk != "" {
			fmt.Fprintf(&b, "```diff\n%s```\n\n", fenceSafe(c.Hunk))
		}
	}
	return b.String()
}

func shortCommit(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// fenceSafe keeps untrusted text from closing the code fence it is in.
func fenceSafe(s string) string {
	return strings.ReplaceAll(s, "```", "ˋˋˋ")
}
