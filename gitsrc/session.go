package gitsrc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"

	"github.com/faultline-dev/faultline/gitsrc/packindex"
)

// An upload-pack session with the remote (git's smart protocol over
// git://, http(s):// or ssh://, reached through the user's url.insteadOf
// rules): its reference advertisement is what `git ls-remote` prints, and
// the same session fetches exactly the commits wanted, with the depth
// options git itself uses — deepen-not to stop at the crashing revision's
// tag, deepen-since or a commit count where the server lacks it.

// remoteSession is one opened session and the remote's advertisement.
type remoteSession struct {
	s   transport.UploadPackSession
	adv *packp.AdvRefs
	url string // the URL dialled
}

// openSession dials the repository's remote and reads its advertisement.
func (f *fetcher) openSession(ctx context.Context) (*remoteSession, error) {
	url := rewriteURL(f.repo.url)
	ep, err := transport.NewEndpoint(url)
	if err != nil {
		return nil, err
	}
	c, err := client.NewClient(ep)
	if err != nil {
		return nil, err
	}
	s, err := c.NewUploadPackSession(ep, nil)
	if err != nil {
		return nil, err
	}
	adv, err := s.AdvertisedReferencesContext(ctx)
	if err != nil {
		s.Close()
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return nil, fmt.Errorf("%s is empty", url)
		}
		return nil, err
	}
	return &remoteSession{s: s, adv: adv, url: url}, nil
}

func (rs *remoteSession) close() { rs.s.Close() }

// refs is the advertisement as `git ls-remote` lists it: every reference
// with its hash, a tag's peeled commit under NAME^{}, and the branch HEAD
// points to ("" when the server does not say).
func (rs *remoteSession) refs() (map[string]plumbing.Hash, string) {
	m := make(map[string]plumbing.Hash, len(rs.adv.References)+len(rs.adv.Peeled))
	for name, h := range rs.adv.References {
		m[name] = h
	}
	for name, h := range rs.adv.Peeled {
		m[name+"^{}"] = h
	}
	head := ""
	for _, v := range rs.adv.Capabilities.Get(capability.SymRef) {
		if from, to, ok := strings.Cut(v, ":"); ok && from == "HEAD" {
			head = to
		}
	}
	return m, head
}

// packRequest says what a fetch wants: the commits to fetch and those the
// cache has; stopAt, when set, is a reference (the crashing revision's
// tag) whose history is not wanted (deepen-not); since and depth bound
// the history otherwise.
type packRequest struct {
	wants, haves []plumbing.Hash
	stopAt       string
	since        time.Time
	depth        int
}

// fetchPack fetches what req asks into the repository's storage, and
// records the history's new shallow boundary. It returns which depth
// option the server took ("deepen-not", "deepen-since", "depth").
func (f *fetcher) fetchPack(ctx context.Context, rs *remoteSession, req packRequest) (string, error) {
	caps := rs.adv.Capabilities
	up := packp.NewUploadPackRequestFromCapabilities(caps)
	// A self-contained pack: every delta's base in it (packindex reads no
	// bases from the cache).
	up.Capabilities.Delete(capability.ThinPack)
	up.Wants, up.Haves = req.wants, req.haves
	how := "depth"
	switch {
	case req.stopAt != "" && caps.Supports(capability.DeepenNot):
		up.Depth, how = packp.DepthReference(req.stopAt), "deepen-not"
		up.Capabilities.Set(capability.DeepenNot)
	case !req.since.IsZero() && caps.Supports(capability.DeepenSince):
		up.Depth, how = packp.DepthSince(req.since), "deepen-since"
		up.Capabilities.Set(capability.DeepenSince)
	case req.depth > 0:
		up.Depth = packp.DepthCommits(req.depth)
	}
	if caps.Supports(capability.Shallow) {
		up.Capabilities.Set(capability.Shallow)
		if sh, err := f.repo.git.Storer.Shallow(); err == nil {
			up.Shallows = sh
		}
	}
	resp, err := rs.s.UploadPack(ctx, up)
	if errors.Is(err, transport.ErrEmptyUploadPackRequest) {
		return how, nil
	}
	if err != nil {
		return how, err
	}
	defer resp.Close()
	if err := f.addShallows(resp.Shallows); err != nil {
		return how, err
	}
	var body io.Reader = resp
	switch {
	case up.Capabilities.Supports(capability.Sideband64k):
		d := sideband.NewDemuxer(sideband.Sideband64k, resp)
		d.Progress = &sidebandProgress{prefix: f.repo.url + ": ", report: f.report}
		body = d
	case up.Capabilities.Supports(capability.Sideband):
		d := sideband.NewDemuxer(sideband.Sideband, resp)
		d.Progress = &sidebandProgress{prefix: f.repo.url + ": ", report: f.report}
		body = d
	}
	return how, f.storePack(body)
}

// storePack writes a pack from the remote into the cached repository:
// the bytes to a temporary file of objects/pack, its index by packindex
// (git index-pack's, in memory that does not grow with the pack), then
// both renamed to pack-CHECKSUM.{pack,idx}, and the repository opened
// again to see them.
func (f *fetcher) storePack(body io.Reader) error {
	if f.repo.dir == "" {
		return errors.New("not a cached repository")
	}
	dir := filepath.Join(f.repo.dir, "objects", "pack")
	tmp, err := os.CreateTemp(dir, "tmp_pack_")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer os.Remove(tmp.Name() + ".idx")
	_, err = io.Copy(tmp, body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	sum, err := packindex.Index(tmp.Name(), tmp.Name()+".idx")
	if err != nil {
		return fmt.Errorf("indexing the fetched pack: %w", err)
	}
	name := filepath.Join(dir, "pack-"+sum.String())
	if err := os.Rename(tmp.Name(), name+".pack"); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name()+".idx", name+".idx"); err != nil {
		return err
	}
	return f.repo.reopen()
}

// addShallows adds the commits the server made the new boundary of the
// fetched history to the repository's shallow list.
func (f *fetcher) addShallows(add []plumbing.Hash) error {
	if len(add) == 0 {
		return nil
	}
	have, err := f.repo.git.Storer.Shallow()
	if err != nil {
		return err
	}
	seen := make(map[plumbing.Hash]bool, len(have))
	for _, h := range have {
		seen[h] = true
	}
	for _, h := range add {
		if !seen[h] {
			have = append(have, h)
			seen[h] = true
		}
	}
	return f.repo.git.Storer.SetShallow(have)
}
