package gitsrc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The upstream history a review reads is fetched once and only as far as
// the question needs: the commits of the upstream branch that the
// crashing revision does not contain (deepen-not at its tag), never the
// history before it. A later run lists the remote's references first (one
// round trip) and fetches nothing when the branch has not moved; when it
// has, only the new commits. Offline, the branch the cache last saw as the
// remote's default is reviewed.

// reviewedRef records, per crashing revision, the upstream head whose
// history after that revision the cache holds completely.
func reviewedRef(base string) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/faultline/reviewed/" + base)
}

// upstreamState is what upstreamHead found.
type upstreamState struct {
	branch string
	head   *object.Commit
	// complete is set when the cache holds all of head's history after
	// the crashing revision: a parent missing from it is one the
	// crashing revision contains, not the end of what was fetched.
	complete bool
	// fetchedAfter: the history was fetched with deepen-not at the
	// crashing revision's tag: nothing before it is in the cache.
	fetchedAfter bool
	// note says what the review could not do as asked (offline fallback).
	note string
}

// upstreamHead makes the upstream branch's commits after the crashing
// revision available, under the cache lock, and returns the branch and its
// head.
func upstreamHead(ctx context.Context, ca *cache, comp *component, opt *Options) (*upstreamState, error) {
	unlock, err := ca.lock(ctx, comp.repo.key, func() {
		opt.progress("waiting for another faultline process fetching "+comp.Repo, 0, 0)
	})
	if err != nil {
		return nil, err
	}
	defer unlock()
	if comp.repo.local {
		return localHead(comp.repo, opt.Review.Branch)
	}
	if opt.Offline {
		return cachedHead(comp, opt.Review.Branch)
	}
	f := &fetcher{repo: comp.repo, report: func(s string) { opt.progress(s, 0, 0) }}
	up, err := fetchUpstream(ctx, f, comp, opt)
	if err != nil && ctx.Err() == nil {
		// The remote is unreachable: review what the cache holds, and say so.
		if cached, cerr := cachedHead(comp, opt.Review.Branch); cerr == nil {
			cached.note = fmt.Sprintf("could not reach %s%s (%v); reviewed the %s branch as the cache last saw it",
				comp.Repo, viaMirror(comp.Repo), err, cached.branch)
			return cached, nil
		}
	}
	return up, err
}

// localHead is the branch of a local working repository (its HEAD by
// default); nothing is fetched.
func localHead(r *repository, branch string) (*upstreamState, error) {
	if branch == "" {
		h, err := r.git.Head()
		if err != nil {
			return nil, err
		}
		c, err := r.peel(h.Hash())
		return &upstreamState{branch: h.Name().Short(), head: c, complete: true}, err
	}
	c, ok := r.localRevision(branch)
	if !ok {
		return nil, fmt.Errorf("no branch %s", branch)
	}
	return &upstreamState{branch: branch, head: c, complete: true}, nil
}

// cachedHead is the upstream branch as the cache holds it: the branch
// asked for, else the one the remote's HEAD last pointed to, else the only
// branch cached.
func cachedHead(comp *component, branch string) (*upstreamState, error) {
	r := comp.repo
	if branch == "" {
		if ref, err := r.git.Storer.Reference("refs/remotes/origin/HEAD"); err == nil && ref.Type() == plumbing.SymbolicReference {
			branch = strings.TrimPrefix(ref.Target().String(), "refs/remotes/origin/")
		}
	}
	if branch == "" {
		branch = onlyCachedBranch(r)
	}
	if branch == "" {
		return nil, fmt.Errorf("offline, and no upstream branch of %s in the cache", comp.Repo)
	}
	ref, err := r.git.Reference(plumbing.ReferenceName("refs/remotes/origin/"+branch), true)
	if err != nil {
		return nil, fmt.Errorf("offline, and the cache has no %s branch of %s", branch, comp.Repo)
	}
	c, err := r.peel(ref.Hash())
	if err != nil {
		return nil, err
	}
	up := &upstreamState{branch: branch, head: c}
	if m, err := r.git.Reference(reviewedRef(comp.Commit), false); err == nil && m.Hash() == c.Hash {
		up.complete, up.fetchedAfter = true, true
	}
	return up, nil
}

// onlyCachedBranch is the one remote branch the cache holds, "" if it
// holds none or several.
func onlyCachedBranch(r *repository) string {
	refs, err := r.git.References()
	if err != nil {
		return ""
	}
	var found []string
	refs.ForEach(func(ref *plumbing.Reference) error {
		n := ref.Name().String()
		if strings.HasPrefix(n, "refs/remotes/origin/") && n != "refs/remotes/origin/HEAD" {
			found = append(found, strings.TrimPrefix(n, "refs/remotes/origin/"))
		}
		return nil
	})
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

// fetchUpstream lists the remote's references and fetches the branch's
// commits after the crashing revision that the cache lacks.
func fetchUpstream(ctx context.Context, f *fetcher, comp *component, opt *Options) (*upstreamState, error) {
	rs, err := f.openSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing %s%s: %w", comp.Repo, viaMirror(comp.Repo), err)
	}
	defer rs.close()
	refs, headRef := rs.refs()
	branch := opt.Review.Branch
	if branch == "" {
		branch = strings.TrimPrefix(headRef, "refs/heads/")
	}
	if branch == "" {
		return nil, fmt.Errorf("%s does not say which branch is its default; set the review branch", comp.Repo)
	}
	remoteHead, ok := refs["refs/heads/"+branch]
	if !ok {
		return nil, fmt.Errorf("%s has no branch %s", comp.Repo, branch)
	}
	r := comp.repo
	branchRef := plumbing.ReferenceName("refs/remotes/origin/" + branch)
	marker, merr := r.git.Reference(reviewedRef(comp.Commit), false)
	if merr != nil || marker.Hash() != remoteHead || !hasCommit(r, remoteHead) {
		opt.progress(fmt.Sprintf("fetching %s %s since %s", comp.Name, branch, comp.Revision), 0, 0)
		if err := f.fetchAfter(ctx, rs, comp, remoteHead, refs, opt); err != nil {
			return nil, fmt.Errorf("fetching %s of %s%s: %w", branch, comp.Repo, viaMirror(comp.Repo), err)
		}
	}
	for _, ref := range []*plumbing.Reference{
		plumbing.NewHashReference(branchRef, remoteHead),
		plumbing.NewSymbolicReference("refs/remotes/origin/HEAD", branchRef),
		plumbing.NewHashReference(reviewedRef(comp.Commit), remoteHead),
	} {
		if err := r.git.Storer.SetReference(ref); err != nil {
			return nil, err
		}
	}
	head, err := r.peel(remoteHead)
	if err != nil {
		return nil, err
	}
	return &upstreamState{branch: branch, head: head, complete: true, fetchedAfter: true}, nil
}

func hasCommit(r *repository, h plumbing.Hash) bool {
	_, err := r.git.CommitObject(h)
	return err == nil
}

// fetchAfter fetches head's commits that the crashing revision does not
// contain: with deepen-not at the revision's tag where the server allows
// it, else back to the window before the revision's date, else as many as
// the review may walk. The commits the cache already has (an earlier
// review's head, the revision itself) are sent as haves, so only what is
// new comes.
func (f *fetcher) fetchAfter(ctx context.Context, rs *remoteSession, comp *component, head plumbing.Hash,
	refs map[string]plumbing.Hash, opt *Options) error {
	req := packRequest{wants: []plumbing.Hash{head}, haves: f.haves(comp), depth: opt.Review.maxCommits()}
	// A tag names the crashing revision for good; a branch may have moved
	// since, so the window bounds the history then.
	if _, ok := refs["refs/tags/"+comp.Revision]; ok {
		req.stopAt = "refs/tags/" + comp.Revision
	}
	if base, err := comp.repo.git.CommitObject(plumbing.NewHash(comp.Commit)); err == nil {
		req.since = base.Committer.When.Add(-opt.Review.window())
	}
	start := time.Now()
	how, err := f.fetchPack(ctx, rs, req)
	if err != nil {
		return err
	}
	opt.progress(fmt.Sprintf("fetched %s since %s (%s) in %.1fs", comp.Name, comp.Revision, how, time.Since(start).Seconds()), 0, 0)
	return nil
}

// haves are the commits the cache holds that a fetch of the upstream
// branch can build on: the crashing revision and the heads earlier
// reviews fetched.
func (f *fetcher) haves(comp *component) []plumbing.Hash {
	out := []plumbing.Hash{plumbing.NewHash(comp.Commit)}
	refs, err := f.repo.git.References()
	if err != nil {
		return out
	}
	seen := map[plumbing.Hash]bool{out[0]: true}
	refs.ForEach(func(ref *plumbing.Reference) error {
		n := ref.Name().String()
		if ref.Type() == plumbing.HashReference && !seen[ref.Hash()] &&
			(strings.HasPrefix(n, "refs/faultline/reviewed/") || strings.HasPrefix(n, "refs/remotes/origin/")) {
			if _, err := f.repo.git.CommitObject(ref.Hash()); err == nil {
				seen[ref.Hash()] = true
				out = append(out, ref.Hash())
			}
		}
		return nil
	})
	return out
}
