package gitsrc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The cache directory holds, per repository URL (key = repoKey(url)):
//
//	repos/KEY.git          bare go-git repository: every object fetched for that URL
//	src/KEY/COMMIT/        the files of COMMIT, written atomically (temp dir, then rename)
//	locks/KEY.lock         flock(2) held while a process fetches or writes KEY
//	patches/COMMIT.patch   commit patches written for editors (faultline.showCommit)

// DefaultCacheDir is $XDG_CACHE_HOME/faultline/sources (os.UserCacheDir).
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "faultline", "sources")
}

// repoKey names a repository in the cache: a readable form of the URL and
// a hash of the exact URL, so that distinct URLs never share a directory.
func repoKey(url string) string {
	sum := sha256.Sum256([]byte(url))
	s := url
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	s = strings.TrimSuffix(strings.TrimSuffix(s, "/"), ".git")
	if i := strings.LastIndexAny(s, "@"); i >= 0 {
		s = s[i+1:]
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 80 {
			break
		}
	}
	name := strings.Trim(b.String(), "._")
	if name == "" {
		name = "repo"
	}
	return name + "-" + hex.EncodeToString(sum[:6])
}

// cache is an opened cache directory.
type cache struct {
	dir string
}

func openCache(dir string) (*cache, error) {
	if dir == "" {
		dir = DefaultCacheDir()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for _, sub := range []string{"repos", "src", "locks", "patches"} {
		if err := os.MkdirAll(filepath.Join(abs, sub), 0o755); err != nil {
			return nil, fmt.Errorf("cache directory: %w", err)
		}
	}
	return &cache{dir: abs}, nil
}

func (c *cache) repoDir(key string) string { return filepath.Join(c.dir, "repos", key+".git") }
func (c *cache) checkoutDir(key, commit string) string {
	return filepath.Join(c.dir, "src", key, commit)
}

// lock takes the cache's lock for key, waiting for other faultline
// processes that hold it; the returned function releases it. flock(2)
// locks are released by the kernel when a process dies, so a crashed
// fetch never leaves the cache locked.
func (c *cache) lock(ctx context.Context, key string, waiting func()) (func(), error) {
	f, err := os.OpenFile(filepath.Join(c.dir, "locks", key+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	told := false
	backoff := 10 * time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
		}
		if !told && waiting != nil {
			waiting()
			told = true
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
		backoff = min(backoff*2, 500*time.Millisecond)
	}
}

// cleanRepoPath validates a path from a repository tree, a DWARF line table
// or a note before it names anything under the cache: it must be relative,
// clean, and free of "..", ".git" and NUL. It returns the path with forward
// slashes.
func cleanRepoPath(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) || strings.Contains(p, "\\") {
		return "", fmt.Errorf("unsafe path %q", p)
	}
	if strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("unsafe path %q: absolute", p)
	}
	for _, el := range strings.Split(p, "/") {
		switch {
		case el == "" || el == ".":
			return "", fmt.Errorf("unsafe path %q: empty or '.' element", p)
		case el == "..":
			return "", fmt.Errorf("unsafe path %q: '..' element", p)
		case strings.EqualFold(el, ".git"):
			return "", fmt.Errorf("unsafe path %q: .git element", p)
		}
	}
	if path.Clean(p) != p {
		return "", fmt.Errorf("unsafe path %q", p)
	}
	return p, nil
}
