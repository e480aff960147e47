package gitsrc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/review"
)

// checkFix answers whether Options.Fix is already in the crashing revision
// of the culprit frame's component (git merge-base --is-ancestor FIX REV),
// fetching the fix and the revision's history when the cache lacks them.
func checkFix(ctx context.Context, ca *cache, c *analysis.Crash, comps []*component, frames []FrameSource, opt *Options) (*FixCheck, error) {
	fix := strings.ToLower(strings.TrimSpace(opt.Fix))
	fc := &FixCheck{Commit: fix}
	if !hexRE.MatchString(fix) {
		return fc, fmt.Errorf("%q is not a commit hash", opt.Fix)
	}
	var order []*component
	if ts := reviewTargets(c, comps, frames, 1); len(ts) > 0 {
		order = append(order, ts[0].comp)
	}
	for _, comp := range comps {
		if !comp.failed && comp.repo != nil && (len(order) == 0 || comp != order[0]) {
			order = append(order, comp)
		}
	}
	if len(order) == 0 {
		return fc, fmt.Errorf("no component was checked out")
	}
	var lastErr error
	for _, comp := range order {
		fc.Component, fc.Revision = comp.Name, comp.Revision
		ok, err := checkFixIn(ctx, ca, comp, fix, fc, opt)
		if ok {
			return fc, nil
		}
		lastErr = err
	}
	fc.Component, fc.Revision = "", ""
	return fc, lastErr
}

// checkFixIn looks for fix in one component; ok is false when the commit
// is not in its repository.
func checkFixIn(ctx context.Context, ca *cache, comp *component, fix string, fc *FixCheck, opt *Options) (bool, error) {
	unlock, err := ca.lock(ctx, comp.repo.key, nil)
	if err != nil {
		return false, err
	}
	defer unlock()
	f := &fetcher{repo: comp.repo, offline: opt.Offline, report: func(s string) { opt.progress(s, 0, 0) }}
	fixCommit, found := comp.repo.localRevision(fix)
	if !found && !opt.Offline && !comp.repo.local {
		if c, err := f.resolve(ctx, fix); err == nil {
			fixCommit, found = c, true
		} else {
			return false, err
		}
	}
	if !found {
		return false, fmt.Errorf("commit %s is not in the cache of %s", fix, comp.Repo)
	}
	fc.Commit, fc.Subject = fixCommit.Hash.String(), review.Subject(fixCommit.Message)
	base, err := comp.repo.git.CommitObject(plumbing.NewHash(comp.Commit))
	if err != nil {
		return true, err
	}
	max := opt.Review.maxCommits()
	inc, known := review.IsAncestor(ctx, comp.repo, fixCommit, base, max)
	if !known && !opt.Offline && !comp.repo.local {
		// The crashing revision was fetched shallow: deepen it and ask again.
		if err := f.fetch(ctx, max, baseSpec(comp)); err != nil {
			f.deepen(ctx, comp.Commit)
		}
		inc, known = review.IsAncestor(ctx, comp.repo, fixCommit, base, max)
	}
	fc.Included, fc.Known = inc, known
	switch {
	case !known:
		fc.Reason = fmt.Sprintf("the history of %s in the cache ends before %s was committed", comp.Revision, shortHash(fc.Commit))
	case inc:
		fc.Reason = fmt.Sprintf("%s is an ancestor of %s (%s)", shortHash(fc.Commit), comp.Revision, shortHash(comp.Commit))
	default:
		fc.Reason = fmt.Sprintf("%s is not in %s (%s)", shortHash(fc.Commit), comp.Revision, shortHash(comp.Commit))
	}
	return true, nil
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// CommitPatch writes the patch of commit (against its first parent) of a
// component's repository into the cache (patches/COMMIT.patch) and returns
// its path, for editors to open (faultline.showCommit). Only the cache is
// read: the commit must have been fetched by a Resolve.
func CommitPatch(cacheDir, repo, commit string) (string, error) {
	if !fullHashRE.MatchString(commit) {
		return "", fmt.Errorf("%q is not a full commit hash", commit)
	}
	ca, err := openCache(cacheDir)
	if err != nil {
		return "", err
	}
	out := filepath.Join(ca.dir, "patches", commit+".patch")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	r, err := ca.openRepository(repo)
	if err != nil {
		return "", err
	}
	defer r.close()
	c, err := r.git.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return "", fmt.Errorf("commit %s of %s is not in the cache: %w", commit, repo, err)
	}
	var text strings.Builder
	fmt.Fprintf(&text, "commit %s\nAuthor: %s <%s>\nDate:   %s\n\n", c.Hash, c.Author.Name, c.Author.Email,
		c.Author.When.Format("Mon Jan 2 15:04:05 2006 -0700"))
	for _, l := range strings.Split(strings.TrimRight(c.Message, "\n"), "\n") {
		text.WriteString("    " + l + "\n")
	}
	text.WriteString("\n")
	var parent *object.Commit
	if len(c.ParentHashes) > 0 {
		parent, _ = r.git.CommitObject(c.ParentHashes[0])
	}
	var patch *object.Patch
	if parent != nil {
		patch, err = parent.Patch(c)
	} else {
		var ct *object.Tree
		if ct, err = c.Tree(); err == nil {
			patch, err = (&object.Tree{}).Patch(ct)
		}
	}
	if err != nil {
		return "", err
	}
	text.WriteString(patch.String())
	if err := writeAtomic(filepath.Join(ca.dir, "patches"), commit+".patch", strings.NewReader(text.String()), 0o644); err != nil {
		return "", err
	}
	return out, nil
}
