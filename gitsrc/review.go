package gitsrc

import (
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/faultline-dev/faultline/analysis"
)

// maxReviewBlob caps a file version read for diffing.
const maxReviewBlob = 8 << 20

// reviewTarget is one file of the crash chain to review.
type reviewTarget struct {
	comp     *component
	frame    FrameSource
	function string
	line     int
}

// reviewTargets picks the culprit frame (the first frame of the crashing
// thread mapped into a component) and its nearest callers, one per file.
func reviewTargets(c *analysis.Crash, comps []*component, frames []FrameSource, n int) []reviewTarget {
	byName := map[string]*component{}
	for _, comp := range comps {
		if !comp.failed {
			byName[comp.Name] = comp
		}
	}
	var out []reviewTarget
	seen := map[string]bool{}
	for _, fs := range frames {
		if fs.Thread != c.CrashingThreadID || fs.Component == "" {
			continue
		}
		comp := byName[fs.Component]
		key := fs.Component + "\x00" + fs.Path
		if comp == nil || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, reviewTarget{comp: comp, frame: fs, function: fs.Function, line: fs.Line})
		if len(out) == n {
			break
		}
	}
	return out
}

// upstreamHead fetches the upstream branch (bounded by ReviewOptions'
// MaxCommits) and returns its name and head commit.
func upstreamHead(ctx context.Context, ca *cache, comp *component, opt *Options) (string, *object.Commit, error) {
	unlock, err := ca.lock(ctx, comp.repo.key, func() {
		opt.progress("waiting for another faultline process fetching "+comp.Repo, 0, 0)
	})
	if err != nil {
		return "", nil, err
	}
	defer unlock()
	f := &fetcher{repo: comp.repo, offline: opt.Offline, report: func(s string) { opt.progress(s, 0, 0) }}
	branch := opt.Review.Branch
	if comp.repo.local {
		if branch == "" {
			h, err := comp.repo.git.Head()
			if err != nil {
				return "", nil, err
			}
			c, err := comp.repo.peel(h.Hash())
			return h.Name().Short(), c, err
		}
		c, ok := comp.repo.localRevision(branch)
		if !ok {
			return "", nil, fmt.Errorf("no branch %s", branch)
		}
		return branch, c, nil
	}
	if !opt.Offline {
		_, head, err := f.remoteRefs(ctx)
		if err != nil {
			return "", nil, err
		}
		if branch == "" {
			branch = strings.TrimPrefix(head, "refs/heads/")
		}
		if branch == "" {
			return "", nil, fmt.Errorf("%s does not say which branch is its default; set the review branch", comp.Repo)
		}
		opt.progress(fmt.Sprintf("fetching %s %s (up to %d commits)", comp.Name, branch, opt.Review.maxCommits()), 0, 0)
		specs := []string{"+refs/heads/" + branch + ":refs/remotes/origin/" + branch}
		// The crashing revision's own history, as deep, tells which
		// upstream commits it already contains (release branches).
		specs = append(specs, baseSpec(comp))
		if err := f.fetch(ctx, opt.Review.maxCommits(), specs...); err != nil {
			if err := f.fetch(ctx, opt.Review.maxCommits(), specs[0]); err != nil {
				return "", nil, fmt.Errorf("fetching %s: %w", branch, err)
			}
		}
	} else if branch == "" {
		refs, _ := comp.repo.git.References()
		if refs != nil {
			refs.ForEach(func(r *plumbing.Reference) error {
				if n := r.Name().String(); branch == "" && (n == "refs/remotes/origin/main" || n == "refs/remotes/origin/master") {
					branch = strings.TrimPrefix(n, "refs/remotes/origin/")
				}
				return nil
			})
		}
		if branch == "" {
			return "", nil, fmt.Errorf("offline, and no upstream branch of %s in the cache", comp.Repo)
		}
	}
	ref, err := comp.repo.git.Reference(plumbing.ReferenceName("refs/remotes/origin/"+branch), true)
	if err != nil {
		return "", nil, fmt.Errorf("branch %s of %s: %w", branch, comp.Repo, err)
	}
	c, err := comp.repo.peel(ref.Hash())
	return branch, c, err
}

// baseSpec is the refspec that fetches the crashing revision again.
func baseSpec(comp *component) string {
	rev := comp.Revision
	if _, err := comp.repo.git.Reference(plumbing.ReferenceName("refs/tags/"+rev), false); err == nil {
		return "+refs/tags/" + rev + ":refs/tags/" + rev
	}
	if _, err := comp.repo.git.Reference(plumbing.ReferenceName("refs/remotes/origin/"+rev), false); err == nil {
		return "+refs/heads/" + rev + ":refs/remotes/origin/" + rev
	}
	return "+" + comp.Commit + ":refs/faultline/" + comp.Commit
}

// reviewCrash reviews the upstream history of the culprit frame's file and
// its nearest callers' files.
func reviewCrash(ctx context.Context, ca *cache, c *analysis.Crash, comps []*component, frames []FrameSource, opt *Options) ([]FileReview, []Problem) {
	var out []FileReview
	var problems []Problem
	type upstream struct {
		branch string
		head   *object.Commit
		walk   walkResult
		err    error
	}
	ups := map[*component]*upstream{}
	for _, t := range reviewTargets(c, comps, frames, opt.Review.frames()) {
		if ctx.Err() != nil {
			return out, problems
		}
		up := ups[t.comp]
		if up == nil {
			up = &upstream{}
			ups[t.comp] = up
			up.branch, up.head, up.err = upstreamHead(ctx, ca, t.comp, opt)
			if up.err == nil {
				base, err := t.comp.repo.git.CommitObject(plumbing.NewHash(t.comp.Commit))
				if err != nil {
					up.err = err
				} else {
					opt.progress("reviewing "+t.comp.Name+" "+up.branch, 0, 0)
					up.walk = commitsAfter(ctx, t.comp.repo, up.head, base, opt.Review.maxCommits(), opt.Review.window())
				}
			}
			if up.err != nil {
				problems = append(problems, Problem{Module: strings.Join(t.comp.Modules, ", "),
					Message: "upstream review of " + t.comp.Name + ": " + up.err.Error()})
			}
		}
		if up.err != nil {
			continue
		}
		fr, err := reviewFile(ctx, t.comp.repo, t.comp.Commit, up.walk.commits, t.frame.Path, t.function, t.line)
		if err != nil {
			problems = append(problems, Problem{Message: "reviewing " + t.frame.Path + ": " + err.Error()})
			continue
		}
		fr.File, fr.Source, fr.Component = t.frame.File, t.frame.Source, t.comp.Name
		fr.Revision, fr.Commit, fr.Branch, fr.Head = t.comp.Revision, t.comp.Commit, up.branch, up.head.Hash.String()
		fr.Walked, fr.Bounded = up.walk.walked, up.walk.bounded
		out = append(out, *fr)
	}
	return out, problems
}

// treeLookup finds file entries in trees, remembering each subtree's
// answer: consecutive commits share almost all their subtrees, so one
// file's entry over tens of thousands of commits costs little more than
// decoding each root tree once.
type treeLookup struct {
	repo *repository
	memo map[lookupKey]plumbing.Hash
}

type lookupKey struct {
	tree plumbing.Hash
	path string
}

func newTreeLookup(r *repository) *treeLookup {
	return &treeLookup{repo: r, memo: map[lookupKey]plumbing.Hash{}}
}

// entry returns the blob hash of path in tree, or ZeroHash when absent.
func (l *treeLookup) entry(tree plumbing.Hash, p string) plumbing.Hash {
	k := lookupKey{tree, p}
	if h, ok := l.memo[k]; ok {
		return h
	}
	var h plumbing.Hash
	if t, err := l.repo.git.TreeObject(tree); err == nil {
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

// reviewFile lists the commits among after (newest first) that changed
// the file at p (its path at base), following renames, and whether each
// changed the lines of function at base (tracked through earlier changes).
// Each diff is bounded (boundedLineDiff); a cancelled ctx ends the review
// with ctx's error.
func reviewFile(ctx context.Context, r *repository, base string, after []*object.Commit, p, function string, line int) (*FileReview, error) {
	bc, err := r.git.CommitObject(plumbing.NewHash(base))
	if err != nil {
		return nil, err
	}
	lk := newTreeLookup(r)
	baseBlob := lk.entry(bc.TreeHash, p)
	if baseBlob.IsZero() {
		return nil, fmt.Errorf("%s is not in %s", p, base)
	}
	src, err := readBlob(r, baseBlob)
	if err != nil {
		return nil, err
	}
	lo, hi := functionRange([]byte(src), line, function)
	fr := &FileReview{Path: p, Function: function, FunctionStart: lo, FunctionEnd: hi, Line: line, Commits: []ReviewCommit{}}
	cur := p
	for i := len(after) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := after[i]
		prev, changed := changedFromParents(r, lk, c, cur)
		if !changed {
			continue
		}
		now := lk.entry(c.TreeHash, cur)
		rc := ReviewCommit{Commit: c.Hash.String(), Subject: subject(c.Message), Date: c.Committer.When.UTC(),
			Author: c.Author.Name, Message: c.Message}
		newPath := cur
		if now.IsZero() {
			// Deleted or renamed: follow an exact or same-named rename.
			np, nh := findRename(r, c, cur, prev)
			if np == "" {
				fr.Commits = append(fr.Commits, rc)
				break
			}
			newPath, now = np, nh
			rc.Path = np
		} else if cur != p {
			rc.Path = cur
		}
		if now != prev {
			lo, hi = diffFunction(ctx, r, &rc, prev, now, lo, hi)
		}
		cur = newPath
		fr.Commits = append(fr.Commits, rc)
	}
	rankCommits(fr.Commits)
	return fr, nil
}

// changedFromParents reports whether commit c changed the file at path
// cur, and the file's blob in c's first parent. A commit TREESAME to any
// parent did not change it (for merges, the change is listed on the side
// that made it); a root commit, one whose parents are missing, or one whose
// first parent lacks the file is not counted as changing it.
func changedFromParents(r *repository, lk *treeLookup, c *object.Commit, cur string) (prev plumbing.Hash, changed bool) {
	if len(c.ParentHashes) == 0 {
		return prev, false
	}
	now := lk.entry(c.TreeHash, cur)
	missingParent := true
	for j, ph := range c.ParentHashes {
		pc, err := r.commit(ph)
		if err != nil {
			continue
		}
		missingParent = false
		pe := lk.entry(pc.TreeHash, cur)
		if j == 0 {
			prev = pe
		}
		if pe == now {
			return prev, false
		}
	}
	return prev, !missingParent && !prev.IsZero()
}

// diffFunction diffs the file's blobs before and after a commit (bounded),
// records in rc whether the change touches the function's lines lo..hi, and
// returns where those lines are after it.
func diffFunction(ctx context.Context, r *repository, rc *ReviewCommit, prev, now plumbing.Hash, lo, hi int) (int, int) {
	oldSrc, err1 := readBlob(r, prev)
	newSrc, err2 := readBlob(r, now)
	if err1 != nil || err2 != nil {
		return lo, hi
	}
	d := boundedLineDiff(ctx, oldSrc, newSrc)
	touches, hunk := overlapHunks(d, lo, hi)
	rc.TouchesFrame = touches
	if touches {
		rc.Hunk = hunk
	}
	return translateRange(d, lo, hi)
}

// rankCommits scores each commit as a likely fix and sorts them: those
// touching the function first, then by score, then newest first.
func rankCommits(commits []ReviewCommit) {
	for i := range commits {
		rc := &commits[i]
		rc.Score, rc.Keywords = fixScore(rc.Message)
		if rc.TouchesFrame {
			rc.Score += 10
		}
	}
	sort.SliceStable(commits, func(i, j int) bool {
		a, b := commits[i], commits[j]
		if a.TouchesFrame != b.TouchesFrame {
			return a.TouchesFrame
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Date.After(b.Date)
	})
}

// findRename finds where a file that commit c removed went: an added file
// with the same content, else an added file with the same name.
func findRename(r *repository, c *object.Commit, old string, oldBlob plumbing.Hash) (string, plumbing.Hash) {
	if len(c.ParentHashes) == 0 {
		return "", plumbing.ZeroHash
	}
	pc, err := r.commit(c.ParentHashes[0])
	if err != nil {
		return "", plumbing.ZeroHash
	}
	pt, err1 := pc.Tree()
	ct, err2 := c.Tree()
	if err1 != nil || err2 != nil {
		return "", plumbing.ZeroHash
	}
	changes, err := object.DiffTree(pt, ct)
	if err != nil {
		return "", plumbing.ZeroHash
	}
	var byName string
	var byNameHash plumbing.Hash
	for _, ch := range changes {
		if ch.From.Name != "" {
			continue // not an addition
		}
		if ch.To.TreeEntry.Hash == oldBlob {
			return ch.To.Name, ch.To.TreeEntry.Hash
		}
		if byName == "" && path.Base(ch.To.Name) == path.Base(old) {
			byName, byNameHash = ch.To.Name, ch.To.TreeEntry.Hash
		}
	}
	return byName, byNameHash
}

func readBlob(r *repository, h plumbing.Hash) (string, error) {
	b, err := r.git.BlobObject(h)
	if err != nil {
		return "", err
	}
	if b.Size > maxReviewBlob {
		return "", fmt.Errorf("blob %s is %d bytes, over %d", h, b.Size, maxReviewBlob)
	}
	rd, err := b.Reader()
	if err != nil {
		return "", err
	}
	defer rd.Close()
	data, err := io.ReadAll(io.LimitReader(rd, maxReviewBlob))
	return string(data), err
}

// countLines counts the lines of a diff chunk (diffmatchpatch chunks of a
// line diff end in "\n", except possibly the file's last line).
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// overlapHunks reports whether a line diff changes lines lo..hi of the old
// file (deletes one of them, or inserts between two of them), and renders
// the overlapping hunks as unified diff text (capped).
func overlapHunks(d []diffmatchpatch.Diff, lo, hi int) (bool, string) {
	old, nw := 1, 1
	touches := false
	var b strings.Builder
	for _, ch := range d {
		n := countLines(ch.Text)
		switch ch.Type {
		case diffmatchpatch.DiffEqual:
			old += n
			nw += n
		case diffmatchpatch.DiffDelete:
			if old <= hi && old+n-1 >= lo {
				touches = true
				writeHunk(&b, old, n, nw, 0, "-", ch.Text)
			}
			old += n
		case diffmatchpatch.DiffInsert:
			if old > lo && old <= hi {
				touches = true
				writeHunk(&b, old, 0, nw, n, "+", ch.Text)
			}
			nw += n
		}
	}
	return touches, b.String()
}

func writeHunk(b *strings.Builder, old, oldN, nw, newN int, sign, text string) {
	if b.Len() > 4096 {
		return
	}
	fmt.Fprintf(b, "@@ -%d,%d +%d,%d @@\n", old, oldN, nw, newN)
	for _, l := range strings.SplitAfter(text, "\n") {
		if l != "" {
			b.WriteString(sign + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
}

// translateRange maps lines lo..hi of the old file onto the new one.
func translateRange(d []diffmatchpatch.Diff, lo, hi int) (int, int) {
	old := 1
	dlo, dhi := 0, 0
	for _, ch := range d {
		n := countLines(ch.Text)
		switch ch.Type {
		case diffmatchpatch.DiffEqual:
			old += n
		case diffmatchpatch.DiffDelete:
			if old < lo {
				dlo -= min(n, lo-old)
			}
			if old <= hi {
				dhi -= min(n, hi-old+1)
			}
			old += n
		case diffmatchpatch.DiffInsert:
			if old <= lo {
				dlo += n
			}
			if old <= hi {
				dhi += n
			}
		}
	}
	nlo, nhi := lo+dlo, hi+dhi
	if nhi < nlo {
		nhi = nlo
	}
	return nlo, nhi
}

var fixKeywords = []struct {
	re     *regexp.Regexp
	word   string
	weight int
}{
	{regexp.MustCompile(`(?i)\bdata[- ]?races?\b|\brac(e|y|es|ing)\b|\bthread[- ]safe`), "race", 5},
	{regexp.MustCompile(`(?i)use[- ]after[- ]free|\buaf\b|dangling`), "use-after-free", 5},
	{regexp.MustCompile(`(?i)\bdouble[- ]free\b`), "double-free", 5},
	{regexp.MustCompile(`(?i)\bseg(fault|mentation fault|v)\b|\bsigsegv\b`), "segfault", 4},
	{regexp.MustCompile(`(?i)\bcrash(es|ed|ing)?([^.\w/]|\.(\s|$)|$)`), "crash", 4}, // not "crash.c"
	{regexp.MustCompile(`(?i)\bnull(ptr)?\b|\bnil\b`), "null", 3},
	{regexp.MustCompile(`(?i)\bdeadlock|\bhang(s|ing)?\b`), "deadlock", 3},
	{regexp.MustCompile(`(?i)\boverflow`), "overflow", 2},
	{regexp.MustCompile(`(?i)\bfix(es|ed|ing)?\b`), "fix", 2},
	{regexp.MustCompile(`(?i)^revert\b|\brevert(s|ed)?\b`), "revert", 2},
}

// fixScore scores how much a commit message reads like a crash fix.
func fixScore(msg string) (int, []string) {
	score := 0
	var words []string
	for _, k := range fixKeywords {
		if k.re.MatchString(msg) {
			score += k.weight
			words = append(words, k.word)
		}
	}
	return score, words
}

func subject(msg string) string {
	s, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	return strings.TrimSpace(s)
}

// ReviewRequest asks for one file's upstream review in a local repository.
type ReviewRequest struct {
	// Base is the crashing revision and Head the upstream head (revisions
	// as git rev-parse takes them: a branch, tag or hash).
	Base, Head string
	// Path is the file's path at Base; Function and Line the crashing frame's.
	Path     string
	Function string
	Line     int
	Review   ReviewOptions
}

// ReviewRepository reviews one file in the git repository at dir (bare or
// not; nothing is fetched): the commits after Base up to Head that changed
// the file, and whether each changed the frame's function.
func ReviewRepository(ctx context.Context, dir string, req ReviewRequest) (*FileReview, error) {
	g, st, err := openGit(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	r := &repository{url: dir, key: repoKey(dir), git: g, local: true, storage: st}
	defer r.close()
	resolve := func(rev string) (*object.Commit, error) {
		if c, ok := r.localRevision(rev); ok {
			return c, nil
		}
		h, err := g.ResolveRevision(plumbing.Revision(rev))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rev, err)
		}
		return r.peel(*h)
	}
	base, err := resolve(req.Base)
	if err != nil {
		return nil, err
	}
	head, err := resolve(req.Head)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := commitsAfter(ctx, r, head, base, req.Review.maxCommits(), req.Review.window())
	fr, err := reviewFile(ctx, r, base.Hash.String(), w.commits, req.Path, req.Function, req.Line)
	if err != nil {
		return nil, err
	}
	fr.Revision, fr.Commit, fr.Branch, fr.Head = req.Base, base.Hash.String(), req.Head, head.Hash.String()
	fr.Walked, fr.Bounded = w.walked, w.bounded
	return fr, nil
}
