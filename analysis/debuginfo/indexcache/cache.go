// Package indexcache is faultline's persistent cache of what is costly to
// rebuild from a debug file and never changes for one build: decompressed
// DWARF sections and per-module indexes, stored per build-id, like gdb's
// index-cache and debuginfod's client cache.
//
// Every entry is one file, written to a temporary file in the cache
// directory and renamed into place, so a reader sees a whole entry or none
// (several processes may fill the cache at once). An entry starts with a
// header — magic, format version, the key it was stored under, the payload
// length and its CRC-32C — and is memory-mapped on lookup; an entry whose
// header or checksum does not verify is deleted and reported as a miss, so
// a damaged entry is rebuilt, never trusted. The directory is bounded in
// size: after each store, least recently used entries (by modification
// time, which a lookup refreshes) are deleted until it fits.
package indexcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/faultline-dev/faultline/analysis/regular"
)

// Version is the entry format version; entries of another version are misses.
const Version = 1

// magic starts every entry.
var magic = [8]byte{'F', 'L', 'I', 'D', 'X', 0, 0, 0}

// headerSize is magic, version u32, key length u32, payload length u64,
// CRC-32C u32, reserved u32; the key follows.
const headerSize = 32

// maxKey bounds a key's length.
const maxKey = 200

// DefaultMaxBytes bounds the cache directory when nothing else is said.
const DefaultMaxBytes = 4 << 30

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Cache is a cache directory. The zero value and nil are a disabled cache.
type Cache struct {
	dir      string
	maxBytes int64
}

// New returns the cache in dir, bounded to maxBytes (DefaultMaxBytes if 0).
func New(dir string, maxBytes int64) *Cache {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &Cache{dir: dir, maxBytes: maxBytes}
}

// Dir is the cache's directory, "" when disabled.
func (c *Cache) Dir() string {
	if c == nil {
		return ""
	}
	return c.dir
}

// Env names the environment variables FromEnv reads.
const (
	EnvDir      = "FAULTLINE_INDEX_CACHE"     // a directory, or "off"
	EnvMaxBytes = "FAULTLINE_INDEX_CACHE_MAX" // bytes, with an optional K, M or G suffix
)

// FromEnv is the cache FAULTLINE_INDEX_CACHE names ("off" disables it),
// else ${XDG_CACHE_HOME:-$HOME/.cache}/faultline/index; nil when disabled
// or no home is known.
func FromEnv() *Cache {
	max, _ := ParseSize(os.Getenv(EnvMaxBytes))
	return Resolve(os.Getenv(EnvDir), max)
}

// Resolve is the cache for a --index-cache setting: "off" disables it, ""
// is the default location, anything else a directory.
func Resolve(setting string, maxBytes int64) *Cache {
	switch setting {
	case "off", "none", "0":
		return nil
	case "":
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil || home == "" {
				return nil
			}
			base = filepath.Join(home, ".cache")
		}
		return New(filepath.Join(base, "faultline", "index"), maxBytes)
	default:
		return New(setting, maxBytes)
	}
}

// ParseSize reads "123", "64K", "512M" or "4G"; 0 for "".
func ParseSize(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	mult := int64(1)
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// ErrBadKey is returned for keys that are not file-name safe.
var ErrBadKey = errors.New("indexcache: key must be 1-200 bytes of [0-9A-Za-z._-]")

func validKey(key string) bool {
	if key == "" || len(key) > maxKey || key[0] == '.' {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (c *Cache) path(key string) string { return filepath.Join(c.dir, key+".idx") }

// Entry is a mapped cache entry. Data is valid until Close.
type Entry struct {
	Data    []byte
	mapping []byte
}

// Close unmaps the entry.
func (e *Entry) Close() {
	if e != nil && e.mapping != nil {
		syscall.Munmap(e.mapping)
		e.mapping, e.Data = nil, nil
	}
}

// Get maps the entry stored under key; nil when there is none or it does
// not verify (a damaged entry is deleted so that the next Put rebuilds it).
func (c *Cache) Get(key string) *Entry {
	if c == nil || c.dir == "" || !validKey(key) {
		return nil
	}
	p := c.path(key)
	f, st, err := regular.Open(p) // a FIFO or device planted in the cache is not waited on
	if err != nil {
		return nil
	}
	defer f.Close()
	if st.Size() < headerSize || int64(int(st.Size())) != st.Size() {
		c.discard(p, st)
		return nil
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	data, ok := verify(m, key)
	if !ok {
		syscall.Munmap(m)
		c.discard(p, st)
		return nil
	}
	// Verifying read every page; the pages stay in the page cache, but
	// need not count in this process's resident set until used again.
	syscall.Madvise(m, syscall.MADV_DONTNEED)
	now := time.Now()
	os.Chtimes(p, now, now) // least recently used goes first
	return &Entry{Data: data, mapping: m}
}

// discard deletes a damaged entry, unless another process has replaced it
// since it was opened.
func (c *Cache) discard(p string, opened os.FileInfo) {
	if st, err := os.Stat(p); err == nil && opened != nil && os.SameFile(st, opened) {
		os.Remove(p)
	}
}

// verify checks an entry's header and checksum and returns its payload.
func verify(m []byte, key string) ([]byte, bool) {
	if len(m) < headerSize || !bytes.Equal(m[:8], magic[:]) {
		return nil, false
	}
	le := binary.LittleEndian
	if le.Uint32(m[8:]) != Version {
		return nil, false
	}
	klen, plen, sum := uint64(le.Uint32(m[12:])), le.Uint64(m[16:]), le.Uint32(m[24:])
	// plen is checked on its own first: headerSize+klen+plen may wrap.
	if klen != uint64(len(key)) || plen > uint64(len(m)) || uint64(len(m)) != headerSize+klen+plen ||
		string(m[headerSize:headerSize+klen]) != key {
		return nil, false
	}
	payload := m[headerSize+klen:]
	if crc32.Checksum(payload, castagnoli) != sum {
		return nil, false
	}
	return payload, true
}

// Put stores payload under key: written to a temporary file and renamed
// into place, then the directory is trimmed to its bound. A payload larger
// than the bound is not stored.
func (c *Cache) Put(key string, payload []byte) error {
	if c == nil || c.dir == "" {
		return nil
	}
	if !validKey(key) {
		return ErrBadKey
	}
	if int64(len(payload))+headerSize+int64(len(key)) > c.maxBytes {
		return nil
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(c.dir, ".tmp-"+key+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	var hdr [headerSize]byte
	copy(hdr[:], magic[:])
	le := binary.LittleEndian
	le.PutUint32(hdr[8:], Version)
	le.PutUint32(hdr[12:], uint32(len(key)))
	le.PutUint64(hdr[16:], uint64(len(payload)))
	le.PutUint32(hdr[24:], crc32.Checksum(payload, castagnoli))
	_, err = f.Write(append(hdr[:], key...))
	if err == nil {
		_, err = f.Write(payload)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, c.path(key))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return c.trim()
}
