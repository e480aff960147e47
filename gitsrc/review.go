package gitsrc

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/review"
)

// maxReviewBlob caps a file version read for diffing.
const maxReviewBlob = 8 << 20

// reviewTarget is one file of the crash chain to review.
type reviewTarget struct {
	comp  *component
	frame FrameSource
	fn    review.FuncSpec
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
		out = append(out, reviewTarget{comp: comp, frame: fs, fn: frameFunc(c, fs)})
		if len(out) == n {
			break
		}
	}
	return out
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
	ups := map[*component]*upstream{}
	for _, t := range reviewTargets(c, comps, frames, opt.Review.frames()) {
		if ctx.Err() != nil {
			return out, problems
		}
		up := ups[t.comp]
		if up == nil {
			up = &upstream{}
			ups[t.comp] = up
			up.state, up.err = upstreamHead(ctx, ca, t.comp, opt)
			module := strings.Join(t.comp.Modules, ", ")
			if up.err != nil {
				problems = append(problems, Problem{Module: module,
					Message: "upstream review of " + t.comp.Name + ": " + up.err.Error()})
			} else if up.state.note != "" {
				problems = append(problems, Problem{Module: module, Message: "upstream review of " + t.comp.Name + ": " + up.state.note})
			}
		}
		if up.err != nil {
			continue
		}
		fr, err := up.review(ctx, ca, t, opt)
		if err != nil {
			problems = append(problems, Problem{Message: "reviewing " + t.frame.Path + ": " + err.Error()})
			continue
		}
		fr.File, fr.Source, fr.Component = t.frame.File, t.frame.Source, t.comp.Name
		fr.Revision, fr.Commit, fr.Branch, fr.Head = t.comp.Revision, t.comp.Commit, up.state.branch, up.state.head.Hash.String()
		out = append(out, *fr)
	}
	return out, problems
}

// upstream is one component's upstream history, walked when a review
// needs it.
type upstream struct {
	state *upstreamState
	hist  *review.History
	walk  review.WalkResult
	err   error
}

// review reviews one target: from the review cache when this revision,
// head, file and function were reviewed before (history does not change
// under a commit hash), else by walking the history.
func (up *upstream) review(ctx context.Context, ca *cache, t reviewTarget, opt *Options) (*FileReview, error) {
	key := reviewKey(t, up.state.head.Hash.String(), opt)
	if fr, ok := ca.loadReview(key); ok {
		return fr, nil
	}
	if up.hist == nil {
		var err error
		if up.hist, up.walk, err = walkUpstream(ctx, t.comp.repo, up.state, t.comp.Commit, opt); err != nil {
			return nil, err
		}
	}
	fr, err := up.hist.ReviewFile(ctx, t.frame.Path, t.fn)
	if err != nil {
		return nil, err
	}
	fr.Walked, fr.Bounded = up.walk.Walked, up.walk.Bounded
	if !fr.Bounded && ctx.Err() == nil {
		ca.storeReview(key, fr)
	}
	return fr, nil
}

// walkUpstream lists the commits of head that the crashing revision does
// not contain.
func walkUpstream(ctx context.Context, r *repository, up *upstreamState, baseHash string, opt *Options) (*review.History, review.WalkResult, error) {
	base, err := r.git.CommitObject(plumbing.NewHash(baseHash))
	if err != nil {
		return nil, review.WalkResult{}, err
	}
	opt.progress("reviewing "+r.url, 0, 0)
	w := review.CommitsAfter(ctx, r, up.head, base, review.WalkBounds{MaxCommits: opt.Review.maxCommits(),
		Window: opt.Review.window(), Complete: up.complete, FetchedAfter: up.fetchedAfter})
	return review.NewHistory(r, up.head, base, w.Commits), w, nil
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

// ReviewRequest asks for one file's upstream review in a local repository.
type ReviewRequest struct {
	// Base is the crashing revision and Head the upstream head (revisions
	// as git rev-parse takes them: a branch, tag or hash).
	Base, Head string
	// Path is the file's path at Base; Function and Line the crashing frame's.
	Path     string
	Function string
	Line     int
	// DeclLine and LastLine are the function's extent from the binary
	// (0: none; the source is parsed instead).
	DeclLine, LastLine int
	Review             ReviewOptions
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
	w := review.CommitsAfter(ctx, r, head, base, review.WalkBounds{MaxCommits: req.Review.maxCommits(),
		Window: req.Review.window(), Complete: true})
	hist := review.NewHistory(r, head, base, w.Commits)
	fr, err := hist.ReviewFile(ctx, req.Path, review.FuncSpec{Name: req.Function, Line: req.Line,
		DeclFile: req.Path, DeclLine: req.DeclLine, LastLine: req.LastLine})
	if err != nil {
		return nil, err
	}
	fr.Revision, fr.Commit, fr.Branch, fr.Head = req.Base, base.Hash.String(), req.Head, head.Hash.String()
	fr.Walked, fr.Bounded = w.Walked, w.Bounded
	return fr, nil
}
