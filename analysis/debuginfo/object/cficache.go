package object

import (
	"sync"

	"github.com/faultline-dev/faultline/analysis/unwind/frame"
)

// FDE indexes in the persistent index cache (indexcache): a .eh_frame
// without a usable .eh_frame_hdr, or a .debug_frame, is searched through
// an index of every FDE's range, built by walking the whole section; it is
// stored under the object's build-id, the section's name and the SHA-256
// of its bytes (DerivedKey), so a later process reads it instead
// (frame.IndexStore), and only for the same bytes.

// cfiIndexVersion is part of the key: entries of another layout are misses.
const cfiIndexVersion = "1"

// frameIndex is the store of one section's FDE index. Its key is computed
// when the index is first loaded or stored: most sections are searched
// through their .eh_frame_hdr and never need one.
type frameIndex struct {
	o    *Object
	name string
	once *sync.Once
	key  *string
}

// FrameIndex returns the store for the FDE index of o's section name
// (data, its bytes); nil when there is no cache, o has no build-id, or
// the section is small enough to walk faster than a cache entry opens.
func FrameIndex(o *Object, name string, data []byte) frame.IndexStore {
	if o == nil || len(data) < CacheMinSize {
		return nil
	}
	if IndexCache() == nil || len(o.BuildID()) == 0 {
		return nil
	}
	return frameIndex{o: o, name: name, once: new(sync.Once), key: new(string)}
}

// cacheKey is the index's key (DerivedKey), "" when there is none.
func (f frameIndex) cacheKey() string {
	f.once.Do(func() { *f.key = f.o.DerivedKey("cfi"+cfiIndexVersion+f.name, f.name) })
	return *f.key
}

func (f frameIndex) Load() []byte {
	key := f.cacheKey()
	if key == "" {
		return nil
	}
	e := IndexCache().Get(key)
	if e == nil {
		return nil
	}
	defer e.Close()
	return append([]byte(nil), e.Data...)
}

func (f frameIndex) Store(index []byte) {
	if key := f.cacheKey(); key != "" {
		IndexCache().Put(key, index)
	}
}
