package gitsrc

import (
	"context"
	"os"
	"path/filepath"

	"github.com/go-git/go-billy/v5/osfs"
	plumbingcache "github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// go-git's file:// transport (used for file:// URLs and for paths to bare
// repositories) runs git-upload-pack from PATH: a repository named by a
// found faultline.json would make faultline run a program. It is replaced
// by go-git's in-process server, reading the repository's files directly,
// so faultline never starts a git subprocess.
func init() {
	client.InstallProtocol("file", localTransport{server.NewClient(localRepoLoader{})})
}

// localRepoLoader opens the repository at an endpoint's path: a bare
// repository, or the .git directory of a working tree.
type localRepoLoader struct{}

func (localRepoLoader) Load(ep *transport.Endpoint) (storer.Storer, error) {
	dir := ep.Path
	if st, err := os.Stat(filepath.Join(dir, ".git")); err == nil && st.IsDir() {
		dir = filepath.Join(dir, ".git")
	}
	if st, err := os.Stat(filepath.Join(dir, "objects")); err != nil || !st.IsDir() {
		return nil, transport.ErrRepositoryNotFound
	}
	return filesystem.NewStorage(osfs.New(dir), plumbingcache.NewObjectLRUDefault()), nil
}

// localTransport is the in-process server as a client transport. The
// server has no shallow support (git-upload-pack's "shallow" capability),
// so a fetch at a depth fetches the wanted commits' whole history, copied
// from the local disk.
type localTransport struct{ transport.Transport }

func (t localTransport) NewUploadPackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.UploadPackSession, error) {
	s, err := t.Transport.NewUploadPackSession(ep, auth)
	if err != nil {
		return nil, err
	}
	return fullDepthSession{s}, nil
}

type fullDepthSession struct{ transport.UploadPackSession }

func (s fullDepthSession) UploadPack(ctx context.Context, req *packp.UploadPackRequest) (*packp.UploadPackResponse, error) {
	req.Depth = packp.DepthCommits(0)
	req.Capabilities.Delete(capability.Shallow)
	return s.UploadPackSession.UploadPack(ctx, req)
}
