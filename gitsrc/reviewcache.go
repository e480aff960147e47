package gitsrc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// The review cache: a file's review depends only on the repository, the
// crashing commit, the upstream head commit, the file and the function's
// extent, so a warm run whose remote has not moved (or an offline run)
// reads it back instead of walking ten thousand commits again.
// reviews/KEY.json under the cache directory; reviewVersion is part of
// the key and changes whenever what a review says would.

const reviewVersion = "review-2"

// maxCachedReview caps a review file read back.
const maxCachedReview = 16 << 20

func reviewKey(t reviewTarget, head string, opt *Options) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n%s\n%+v\n%d %d\n", reviewVersion, t.comp.Repo, t.comp.Commit, head, t.frame.Path, t.fn,
		opt.Review.maxCommits(), opt.Review.window())
	return hex.EncodeToString(h.Sum(nil))
}

func (c *cache) reviewPath(key string) string { return filepath.Join(c.dir, "reviews", key+".json") }

// loadReview reads a cached review; a missing or unreadable one is a miss.
func (c *cache) loadReview(key string) (*FileReview, bool) {
	f, err := os.Open(c.reviewPath(key))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCachedReview+1))
	if err != nil || len(data) > maxCachedReview {
		return nil, false
	}
	var fr FileReview
	if err := json.Unmarshal(data, &fr); err != nil || fr.Commits == nil {
		return nil, false
	}
	return &fr, true
}

// storeReview writes a review for later runs (atomically; a failure only
// costs the next run a walk).
func (c *cache) storeReview(key string, fr *FileReview) {
	data, err := json.Marshal(fr)
	if err != nil || len(data) > maxCachedReview {
		return
	}
	dir := filepath.Dir(c.reviewPath(key))
	if os.MkdirAll(dir, 0o755) == nil {
		writeAtomic(dir, key+".json", bytes.NewReader(data), 0o644)
	}
}
