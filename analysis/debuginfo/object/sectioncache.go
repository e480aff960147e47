package object

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/indexcache"
)

// Decompressed sections in the persistent index cache (indexcache): the
// part of a compressed section that was inflated (lazy.go) is stored under
// the file's build-id when the object is closed, and memory-mapped by
// every later process that opens the same build — the editor re-opening a
// core, the next core of the same job.

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

// DerivedKey names an index built from sections of o (symbols, FDEs,
// units): build-id, what, and the SHA-256 of the named sections' headers
// and file bytes (the compressed bytes of a compressed section; a missing
// section counts as empty), so an entry is only used for the bytes it was
// built from. "" when o has no build-id or no cache is in use.
func (o *Object) DerivedKey(what string, sections ...string) string {
	k := o.CacheKey(what, nil)
	if k == "" {
		return ""
	}
	h := sha256.New()
	var hdr [8 * 8]byte
	le := binary.LittleEndian
	for _, name := range sections {
		s := o.Elf.Section(name)
		if s == nil && strings.HasPrefix(name, ".debug_") {
			s = o.Elf.Section(".zdebug_" + name[len(".debug_"):])
		}
		h.Write([]byte(name))
		if s == nil {
			h.Write([]byte{0})
			continue
		}
		for i, v := range []uint64{uint64(s.Type), uint64(s.Flags), s.Addr, s.Offset, s.FileSize, uint64(s.Link), uint64(s.Info), s.Entsize} {
			le.PutUint64(hdr[8*i:], v)
		}
		h.Write(hdr[:])
		raw := o.RawSection(s)
		le.PutUint64(hdr[:8], uint64(len(raw)))
		h.Write(hdr[:8])
		h.Write(raw)
	}
	return k[:strings.LastIndexByte(k, '-')] + "-" + hex.EncodeToString(h.Sum(nil))
}

// CachedSection maps a cached decompressed section (or the prefix of one
// that was stored), its payload to be read through Verified; nil when
// there is none.
func CachedSection(key string) *indexcache.Entry {
	if key == "" {
		return nil
	}
	return IndexCache().GetPartial(key)
}

// A decompressed section's entry, or the entry of the prefix of it that
// was read, is stored under CacheKey (build-id, name, compressed size) and
// starts with what it was decoded from: "FLZP", the decompressed size the
// compression header states (u64), how many bytes of the compressed
// section (its header included) the prefix was decoded from (u64), and
// their SHA-256. A process uses it only for a section of that stated size
// whose first that-many bytes have that hash: the same compressed bytes
// decode to the same prefix, so a file carrying another file's build-id
// (a bug reporter's "libc debug file") never serves its content to the
// genuine file, and only the compressed bytes a prefix came from are
// hashed, not the whole section.
const (
	sectionMagic  = "FLZP"
	sectionHeader = 4 + 8 + 8 + sha256.Size
)

// newSectionHeader is the header of the entry of a prefix decoded from
// raw[:read] of a section stated to be size bytes.
func newSectionHeader(size uint64, raw []byte, read int) []byte {
	read = min(max(read, 0), len(raw))
	h := make([]byte, 0, sectionHeader)
	h = append(h, sectionMagic...)
	h = binary.LittleEndian.AppendUint64(h, size)
	h = binary.LittleEndian.AppendUint64(h, uint64(read))
	sum := sha256.Sum256(raw[:read])
	return append(h, sum[:]...)
}

// sectionHeaderFits reports whether an entry's header h says it was
// decoded from these compressed bytes raw, stated to be size bytes.
func sectionHeaderFits(h []byte, size uint64, raw []byte) bool {
	if len(h) < sectionHeader || string(h[:4]) != sectionMagic {
		return false
	}
	le := binary.LittleEndian
	read := le.Uint64(h[12:])
	if le.Uint64(h[4:]) != size || read > uint64(len(raw)) {
		return false
	}
	sum := sha256.Sum256(raw[:read])
	return string(h[20:sectionHeader]) == string(sum[:])
}

// storeSection stores a decompressed section (or its prefix) with its
// header; a cache that cannot be written only costs the next process the
// decompression.
func storeSection(key string, header, data []byte) {
	if key == "" || len(data) < CacheMinSize {
		return
	}
	IndexCache().Put(key, header, data)
}
