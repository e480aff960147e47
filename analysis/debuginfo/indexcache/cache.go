// Package indexcache is faultline's persistent cache of what is costly to
// rebuild from a debug file and never changes for one build: decompressed
// DWARF sections and per-module indexes, stored per build-id, like gdb's
// index-cache and debuginfod's client cache.
//
// Every entry is one file, written to a temporary file in the cache
// directory and renamed into place, so a reader sees a whole entry or none
// (several processes may fill the cache at once). An entry starts with a
// header — magic, format version, the key it was stored under, the payload
// length and the CRC-32C of a table that holds the CRC-32C of each
// 256 KiB chunk of the payload — and is memory-mapped on lookup; an entry
// whose header or checksums do not verify is deleted and reported as a
// miss, so a damaged entry is rebuilt, never trusted. Get verifies the
// whole payload; GetPartial only the header and table, and the chunks as a
// reader reaches them (Entry.Verified), so a reader of part of a big entry
// (the units one core's frames are in) reads only that part. The
// directory is bounded in size: after stores (the first of a process,
// then one per 1/64 of the bound stored), least recently used entries (by
// modification time, which a lookup refreshes) are deleted until it fits.
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
	"sync"
	"syscall"
	"time"

	"github.com/faultline-dev/faultline/analysis/regular"
)

// Version is the entry format version; entries of another version are misses.
const Version = 2

// chunkSize is the payload span each checksum of the table covers.
const chunkSize = 256 << 10

// magic starts every entry.
var magic = [8]byte{'F', 'L', 'I', 'D', 'X', 0, 0, 0}

// headerSize is magic, version u32, key length u32, payload length u64,
// the chunk table's CRC-32C u32, reserved u32; the key follows, then the
// table (a u32 per chunk), then the payload.
const headerSize = 32

// maxKey bounds a key's length.
const maxKey = 200

// DefaultMaxBytes bounds the cache directory when nothing else is said.
const DefaultMaxBytes = 4 << 30

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Cache is a cache directory. The zero value and nil are a disabled cache.
// It is safe for concurrent use.
type Cache struct {
	dir      string
	maxBytes int64

	mu        sync.Mutex
	trimmed   bool  // this process trimmed the directory once
	sinceTrim int64 // bytes stored since
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

// Entry is a mapped cache entry. Data is valid until Close; an entry from
// GetPartial has Data nil, and its payload is read through Verified.
type Entry struct {
	Data    []byte
	mapping []byte

	payload  []byte // the whole payload, unverified past verified
	table    []byte // the chunk checksums
	verified int    // payload bytes checked so far
	bad      bool
	c        *Cache
	path     string
	opened   os.FileInfo
}

// Close unmaps the entry.
func (e *Entry) Close() {
	if e != nil && e.mapping != nil {
		syscall.Munmap(e.mapping)
		e.mapping, e.Data, e.payload = nil, nil, nil
	}
}

// Size is the payload's size.
func (e *Entry) Size() int { return len(e.payload) }

// Verified checks the payload's chunks as far as n bytes (all of it when n
// is past its end) and returns them; ok is false when a chunk does not
// match its checksum, and the entry is then deleted from the cache (the
// caller rebuilds it). Not safe for concurrent use.
func (e *Entry) Verified(n int) (b []byte, ok bool) {
	n = min(max(n, 0), len(e.payload))
	for !e.bad && e.verified < n {
		end := min(e.verified+chunkSize, len(e.payload))
		i := e.verified / chunkSize
		if crc32.Checksum(e.payload[e.verified:end], castagnoli) != binary.LittleEndian.Uint32(e.table[4*i:]) {
			e.bad = true
			e.c.discard(e.path, e.opened)
			break
		}
		e.verified = end
	}
	if e.bad {
		return nil, false
	}
	return e.payload[:n], true
}

// Get maps the entry stored under key and verifies all of it; nil when
// there is none or it does not verify (a damaged entry is deleted so that
// the next Put rebuilds it).
func (c *Cache) Get(key string) *Entry {
	e := c.GetPartial(key)
	if e == nil {
		return nil
	}
	data, ok := e.Verified(len(e.payload))
	if !ok {
		e.Close()
		return nil
	}
	e.Data = data
	return e
}

// GetPartial maps the entry stored under key, verifying its header and
// chunk table but not its payload (see Entry.Verified); nil when there is
// none or the header does not verify.
func (c *Cache) GetPartial(key string) *Entry {
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
	payload, table, ok := verifyHeader(m, key)
	if !ok {
		syscall.Munmap(m)
		c.discard(p, st)
		return nil
	}
	now := time.Now()
	os.Chtimes(p, now, now) // least recently used goes first
	return &Entry{mapping: m, payload: payload, table: table, c: c, path: p, opened: st}
}

// discard deletes a damaged entry, unless another process has replaced it
// since it was opened.
func (c *Cache) discard(p string, opened os.FileInfo) {
	if st, err := os.Stat(p); err == nil && opened != nil && os.SameFile(st, opened) {
		os.Remove(p)
	}
}

// verify checks an entry's header and checksums and returns its payload.
func verify(m []byte, key string) ([]byte, bool) {
	payload, table, ok := verifyHeader(m, key)
	if !ok {
		return nil, false
	}
	for off := 0; off < len(payload); off += chunkSize {
		chunk := payload[off:min(off+chunkSize, len(payload))]
		if crc32.Checksum(chunk, castagnoli) != binary.LittleEndian.Uint32(table[4*(off/chunkSize):]) {
			return nil, false
		}
	}
	return payload, true
}

// verifyHeader checks an entry's header, key and chunk table and returns
// its payload and table.
func verifyHeader(m []byte, key string) (payload, table []byte, ok bool) {
	if len(m) < headerSize || !bytes.Equal(m[:8], magic[:]) {
		return nil, nil, false
	}
	le := binary.LittleEndian
	if le.Uint32(m[8:]) != Version {
		return nil, nil, false
	}
	klen, plen, sum := uint64(le.Uint32(m[12:])), le.Uint64(m[16:]), le.Uint32(m[24:])
	// plen is checked on its own first: the sum of the sizes may wrap.
	if klen > maxKey || plen > uint64(len(m)) {
		return nil, nil, false
	}
	tlen := 4 * chunks(plen)
	if uint64(len(m)) != headerSize+klen+tlen+plen || klen != uint64(len(key)) || string(m[headerSize:headerSize+klen]) != key {
		return nil, nil, false
	}
	table = m[headerSize+klen : headerSize+klen+tlen]
	if crc32.Checksum(table, castagnoli) != sum {
		return nil, nil, false
	}
	return m[headerSize+klen+tlen:], table, true
}

// chunks is how many chunks a payload of n bytes has.
func chunks(n uint64) uint64 { return (n + chunkSize - 1) / chunkSize }

// header is an entry's bytes before its payload, the concatenation of parts.
func header(key string, parts ...[]byte) []byte {
	var size int
	for _, p := range parts {
		size += len(p)
	}
	n := chunks(uint64(size))
	b := make([]byte, headerSize, headerSize+uint64(len(key))+4*n)
	copy(b, magic[:])
	le := binary.LittleEndian
	le.PutUint32(b[8:], Version)
	le.PutUint32(b[12:], uint32(len(key)))
	le.PutUint64(b[16:], uint64(size))
	b = append(b, key...)
	t := len(b)
	var crc uint32
	fill := 0 // bytes of the current chunk summed
	for _, p := range parts {
		for len(p) > 0 {
			k := min(len(p), chunkSize-fill)
			crc = crc32.Update(crc, castagnoli, p[:k])
			p, fill = p[k:], fill+k
			if fill == chunkSize {
				b = le.AppendUint32(b, crc)
				crc, fill = 0, 0
			}
		}
	}
	if fill > 0 {
		b = le.AppendUint32(b, crc)
	}
	le.PutUint32(b[24:], crc32.Checksum(b[t:], castagnoli))
	return b
}

// Put stores payload (the concatenation of parts) under key: written to a
// temporary file and renamed into place, then the directory is trimmed to
// its bound. A payload larger than the bound is not stored.
func (c *Cache) Put(key string, parts ...[]byte) error {
	if c == nil || c.dir == "" {
		return nil
	}
	if !validKey(key) {
		return ErrBadKey
	}
	var size int64
	for _, p := range parts {
		size += int64(len(p))
	}
	if size+headerSize+int64(len(key)) > c.maxBytes {
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
	_, err = f.Write(header(key, parts...))
	for _, p := range parts {
		if err == nil {
			_, err = f.Write(p)
		}
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
	if c.trimDue(size) {
		return c.trim()
	}
	return nil
}

// trimDue says whether a store of n bytes should trim the directory: the
// first store of the process does, then one every maxBytes/64 bytes
// stored, so the directory stays within its bound (plus at most that
// much) without every store listing it.
func (c *Cache) trimDue(n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sinceTrim += n
	if c.trimmed && c.sinceTrim < c.maxBytes/64 {
		return false
	}
	c.trimmed, c.sinceTrim = true, 0
	return true
}
