package gitsrc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/faultline-dev/faultline/gitsrc/moduleorigin"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// repository is a cached repository: a bare go-git repository under
// repos/, or, for a local working repository (a .git directory found near
// the DWARF compilation directory), that repository opened in place.
type repository struct {
	url     string
	key     string
	git     *git.Repository
	local   bool
	storage interface{ Close() error }
	commits map[plumbing.Hash]*object.Commit
	// dir is the cached repository's directory (bare); "" for a local one.
	dir string
}

var (
	fullHashRE = moduleorigin.FullHashRE
	hexRE      = moduleorigin.HexRE
)

// unshallowDepth is the depth git itself sends for --unshallow.
const unshallowDepth = math.MaxInt32

// openRepository opens (creating it if needed) the cached repository for
// url. The caller holds the cache lock for repoKey(url).
func (c *cache) openRepository(url string) (*repository, error) {
	key := repoKey(url)
	if dir, ok := localRepoDir(url); ok {
		r, st, err := openGit(dir)
		if err != nil {
			return nil, fmt.Errorf("opening local repository %s: %w", dir, err)
		}
		return &repository{url: url, key: key, git: r, local: true, storage: st}, nil
	}
	dir := c.repoDir(key)
	_, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		// Initialise in a temporary directory and rename, so that a crash
		// half way never leaves a repository without its remote.
		tmp, err := os.MkdirTemp(filepath.Dir(dir), ".init-"+key+"-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		r, err := git.PlainInit(tmp, true)
		if err != nil {
			return nil, err
		}
		if _, err := r.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{url}}); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, dir); err != nil {
			return nil, err
		}
	}
	r, st, err := openGit(dir)
	if err != nil {
		return nil, fmt.Errorf("opening cached repository %s: %w", dir, err)
	}
	return &repository{url: url, key: key, git: r, storage: st, dir: dir}, nil
}

// localRepoDir reports whether url names a local directory holding a git
// working repository (not a file:// URL, which is fetched like any other).
func localRepoDir(url string) (string, bool) {
	if !filepath.IsAbs(url) {
		return "", false
	}
	if _, _, ok := workingGitDir(url); ok {
		return url, true
	}
	return "", false
}

// sidebandProgress turns the remote's sideband messages ("Receiving
// objects: 45% (450/1000)") into progress reports.
type sidebandProgress struct {
	prefix string
	report func(string)
	buf    []byte
}

func (p *sidebandProgress) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexAny(string(p.buf), "\r\n")
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(p.buf[:i])); line != "" && p.report != nil {
			p.report(p.prefix + line)
		}
		p.buf = p.buf[i+1:]
	}
	if len(p.buf) > 4096 {
		p.buf = p.buf[len(p.buf)-4096:]
	}
	return len(b), nil
}

// fetcher fetches revisions of one repository.
type fetcher struct {
	repo    *repository
	offline bool
	report  func(string)
}

func (f *fetcher) fetch(ctx context.Context, depth int, specs ...string) error {
	if f.repo.local {
		return nil
	}
	if f.offline {
		return errOffline
	}
	rs := make([]config.RefSpec, len(specs))
	for i, s := range specs {
		rs[i] = config.RefSpec(s)
	}
	err := f.repo.git.FetchContext(ctx, &git.FetchOptions{
		RemoteName: "origin",
		RemoteURL:  rewriteURL(f.repo.url),
		RefSpecs:   rs,
		Depth:      depth,
		Tags:       git.NoTags,
		Force:      true,
		Progress:   &sidebandProgress{prefix: f.repo.url + ": ", report: f.report},
	})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return err
}

var errOffline = errors.New("not in the cache, and offline")

// remoteRefs lists the remote's references, peeled tags included, and
// the branch its HEAD points to.
func (f *fetcher) remoteRefs(ctx context.Context) (map[string]plumbing.Hash, string, error) {
	if f.offline || f.repo.local {
		return nil, "", errOffline
	}
	rs, err := f.openSession(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("listing %s%s: %w", f.repo.url, viaMirror(f.repo.url), err)
	}
	defer rs.close()
	m, head := rs.refs()
	return m, head, nil
}

// peel resolves a reference's hash to a commit (annotated tags point to tag objects).
func (r *repository) peel(h plumbing.Hash) (*object.Commit, error) {
	for range 8 {
		if c, err := r.git.CommitObject(h); err == nil {
			return c, nil
		}
		t, err := r.git.TagObject(h)
		if err != nil {
			return nil, fmt.Errorf("%s is neither a commit nor a tag in %s", h, r.url)
		}
		h = t.Target
	}
	return nil, fmt.Errorf("tag chain too long at %s", h)
}

// localRevision resolves rev with what the repository already holds.
func (r *repository) localRevision(rev string) (*object.Commit, bool) {
	names := []string{"refs/tags/" + rev, "refs/remotes/origin/" + rev, "refs/heads/" + rev, "refs/faultline/" + rev}
	if r.local {
		names = append(names, rev)
	}
	for _, n := range names {
		ref, err := r.git.Reference(plumbing.ReferenceName(n), true)
		if err != nil {
			continue
		}
		if c, err := r.peel(ref.Hash()); err == nil {
			return c, true
		}
	}
	if hexRE.MatchString(rev) {
		if fullHashRE.MatchString(rev) {
			if c, err := r.git.CommitObject(plumbing.NewHash(rev)); err == nil {
				return c, true
			}
			return nil, false
		}
		if h, err := r.git.ResolveRevision(plumbing.Revision(rev)); err == nil {
			if c, err := r.git.CommitObject(*h); err == nil {
				return c, true
			}
		}
	}
	return nil, false
}

// resolve makes the commit that rev (a tag, branch or commit hash) names
// available in the repository and returns it. Tags and branches are fetched
// at depth 1; a commit hash is fetched by hash where the server allows it
// (uploadpack.allowReachableSHA1InWant / allowTipSHA1InWant), and otherwise
// found by fetching the remote's branches and tags deeper and deeper.
func (f *fetcher) resolve(ctx context.Context, rev string) (*object.Commit, error) {
	r := f.repo
	isHash := fullHashRE.MatchString(rev)
	// Tags and commits never change: the cache answers for them.
	if c, ok := r.localRevision(rev); ok {
		if ref, err := r.git.Reference(plumbing.ReferenceName("refs/remotes/origin/"+rev), true); err != nil || ref == nil || f.offline || r.local {
			return c, nil
		}
	}
	if f.offline || r.local {
		return nil, fmt.Errorf("revision %s of %s: %w", rev, r.url, errOffline)
	}
	refs, _, err := f.remoteRefs(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := refs["refs/tags/"+rev]; ok {
		spec := "+refs/tags/" + rev + ":refs/tags/" + rev
		if err := f.fetch(ctx, 1, spec); err != nil {
			return nil, fmt.Errorf("fetching tag %s of %s: %w", rev, r.url, err)
		}
		return f.mustLocal(rev)
	}
	if _, ok := refs["refs/heads/"+rev]; ok {
		spec := "+refs/heads/" + rev + ":refs/remotes/origin/" + rev
		if err := f.fetch(ctx, 1, spec); err != nil {
			return nil, fmt.Errorf("fetching branch %s of %s: %w", rev, r.url, err)
		}
		return f.mustLocal(rev)
	}
	if !hexRE.MatchString(rev) {
		return nil, fmt.Errorf("%s has no tag or branch %q", r.url, rev)
	}
	if isHash {
		// A commit that a reference points at is fetched through that reference.
		for name, h := range refs {
			if h.String() == rev && (strings.HasPrefix(name, "refs/heads/") || strings.HasPrefix(name, "refs/tags/")) {
				if err := f.fetch(ctx, 1, "+"+strings.TrimSuffix(name, "^{}")+":refs/faultline/"+rev); err == nil {
					if c, ok := r.localRevision(rev); ok {
						return c, nil
					}
				}
			}
		}
		err := f.fetch(ctx, 1, "+"+rev+":refs/faultline/"+rev)
		if err == nil {
			if c, ok := r.localRevision(rev); ok {
				return c, nil
			}
		}
		if f.report != nil {
			f.report(fmt.Sprintf("%s: fetch by hash refused (%v); fetching history to find %s", r.url, err, rev[:12]))
		}
	}
	return f.deepen(ctx, rev)
}

// deepen fetches every branch and tag of the remote deeper and deeper
// until rev is found.
func (f *fetcher) deepen(ctx context.Context, rev string) (*object.Commit, error) {
	specs := []string{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"}
	var last error
	for _, depth := range []int{64, 1024, unshallowDepth} {
		if err := f.fetch(ctx, depth, specs...); err != nil {
			last = err
			continue
		}
		if c, ok := f.repo.localRevision(rev); ok {
			if fullHashRE.MatchString(rev) {
				ref := plumbing.NewHashReference(plumbing.ReferenceName("refs/faultline/"+rev), c.Hash)
				_ = f.repo.git.Storer.SetReference(ref)
			}
			return c, nil
		}
	}
	if last != nil {
		return nil, fmt.Errorf("commit %s not found in %s: %w", rev, f.repo.url, last)
	}
	return nil, fmt.Errorf("commit %s not found in any branch or tag of %s", rev, f.repo.url)
}

func (f *fetcher) mustLocal(rev string) (*object.Commit, error) {
	if c, ok := f.repo.localRevision(rev); ok {
		return c, nil
	}
	return nil, fmt.Errorf("revision %s of %s missing after fetch", rev, f.repo.url)
}
