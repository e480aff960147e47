package object

import (
	"encoding/hex"
	"strconv"
	"strings"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/indexcache"
)

// Decompressed sections in the persistent index cache (indexcache): a
// compressed section is inflated once per build, stored under the file's
// build-id, and memory-mapped by every later process that opens the same
// build — the editor re-opening a core, the next core of the same job.

// CacheMinSize is the decompressed size from which a section is cached:
// smaller ones inflate faster than a cache file opens.
const CacheMinSize = 64 << 10

var indexCache struct {
	once sync.Once
	mu   sync.Mutex
	c    *indexcache.Cache
	set  bool
}

// SetIndexCache sets the cache the process uses (nil disables it); without
// a call, indexcache.FromEnv decides on first use.
func SetIndexCache(c *indexcache.Cache) {
	indexCache.mu.Lock()
	indexCache.c, indexCache.set = c, true
	indexCache.mu.Unlock()
}

// IndexCache is the cache the process uses, nil if none.
func IndexCache() *indexcache.Cache {
	indexCache.mu.Lock()
	defer indexCache.mu.Unlock()
	if !indexCache.set {
		indexCache.c, indexCache.set = indexcache.FromEnv(), true
	}
	return indexCache.c
}

// CacheKey names a compressed section of o in the cache: build-id, section
// name and compressed size (a binary and its debug file share a build-id);
// "" when o has no build-id or no cache is in use.
func (o *Object) CacheKey(name string, raw []byte) string {
	if IndexCache() == nil {
		return ""
	}
	id := o.BuildID()
	if len(id) < 8 || len(id) > 64 {
		return ""
	}
	return hex.EncodeToString(id) + "-" + strings.TrimLeft(name, ".") + "-" + strconv.FormatInt(int64(len(raw)), 16)
}

// CachedSection maps a cached decompressed section.
func CachedSection(key string) (sectionData, bool) {
	if key == "" {
		return sectionData{}, false
	}
	e := IndexCache().Get(key)
	if e == nil {
		return sectionData{}, false
	}
	return sectionData{data: e.Data, unmap: e.Close}, true
}

// storeSection stores a decompressed section; a cache that cannot be
// written only costs the next process the decompression.
func storeSection(key string, data []byte) {
	if key == "" || len(data) < CacheMinSize {
		return
	}
	IndexCache().Put(key, data)
}
