package object

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/indexcache"
)

// Lazy sections. A compressed section (SHF_COMPRESSED, .zdebug_*) is one
// deflate or zstd stream: its bytes can only be had in order. Readers of
// DWARF need a prefix of it: the units their frames land in, the line
// programs and abbreviation tables of those units, which lie where the
// units do. A Lazy decompresses up to the furthest offset asked for (in
// steps of lazyStep) into a buffer of the section's full size, so a core
// whose frames are in the first third of libc's units never pays for the
// rest, and a second reader of the same bytes pays nothing.
//
// The prefix decompressed is stored in the index cache when the object is
// closed (when it grew past what the cache held), and the next process maps
// it instead of decompressing; one that needs more than the stored prefix
// decompresses from the start of the stream again.

// lazyStep is the granularity of progressive decompression: a reader asking
// for offset n gets the section decompressed to n rounded up to it (to
// lazyFirstStep while nothing past that is asked for: whether a file has
// DWARF at all is one unit header).
const (
	lazyStep      = 128 << 10
	lazyFirstStep = 16 << 10
)

// Lazy is one section's bytes, materialized as far as readers need them.
// It is safe for concurrent use; a nil *Lazy is an absent section.
type Lazy struct {
	o    *Object
	name string
	addr uint64
	off  int64  // the section's file offset, for errors
	size uint64 // bytes of the (decompressed) section

	mu   sync.Mutex // guards buf, done, err
	buf  []byte     // size bytes; [:done] are valid
	done uint64
	err  error

	dec      sync.Mutex // held while decompressing; taken before mu
	open     func(out []byte) (decoder, func(), error)
	r        decoder // the stream, positioned at decoded (nil: not opened)
	closeR   func()
	decoded  uint64            // bytes the stream has produced into own
	own      []byte            // the buffer decompression writes (allocSection), nil before
	raw      []byte            // the compressed section, its header included
	hdr      int               // the compression header's size
	key      string            // index-cache key, "" without a cache (cacheKey)
	keyed    bool              // key is set
	looked   bool              // the cache was asked for key
	entry    *indexcache.Entry // the cached prefix, verified as read
	stored   uint64            // bytes the cache holds under key
	releases []func()
	closed   bool // the object was closed: no more steps (a prefetch may be late)
}

// Name is the section's name.
func (l *Lazy) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

// Addr is the section's link-time address.
func (l *Lazy) Addr() uint64 {
	if l == nil {
		return 0
	}
	return l.addr
}

// Size is the section's size (decompressed), whether or not it is read yet.
func (l *Lazy) Size() uint64 {
	if l == nil {
		return 0
	}
	return l.size
}

// Err is why the section could not be decompressed as far as asked, if so.
func (l *Lazy) Err() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Upto returns the section's first bytes: at least end of them, or all of
// it when end is past its size; fewer only when decompression failed (Err
// says why). The slice stays valid until the object is closed.
func (l *Lazy) Upto(end uint64) []byte {
	if l == nil {
		return nil
	}
	end = min(end, l.size)
	l.mu.Lock()
	if l.done >= end || l.err != nil {
		b := l.buf[:l.done:l.done]
		l.mu.Unlock()
		return b
	}
	l.mu.Unlock()
	l.advance(end)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf[:l.done:l.done]
}

// All returns the whole section (see Upto).
func (l *Lazy) All() []byte { return l.Upto(l.Size()) }

// Done is how many bytes are available without decompressing further.
func (l *Lazy) Done() uint64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done
}

// CString returns the NUL-terminated string at off (without the NUL),
// decompressing as far as the NUL; ok is false when off is past the end or
// no NUL follows it.
func (l *Lazy) CString(off uint64) (b []byte, ok bool) {
	if l == nil || off >= l.size {
		return nil, false
	}
	for end := off + 256; ; end += max(end-off, lazyStep) {
		d := l.Upto(end)
		if off >= uint64(len(d)) {
			return nil, false
		}
		if i := bytes.IndexByte(d[off:], 0); i >= 0 {
			return d[off : off+uint64(i)], true
		}
		if uint64(len(d)) >= l.size || uint64(len(d)) < min(end, l.size) {
			return nil, false
		}
	}
}

// advance decompresses until at least end bytes are available (or the
// stream fails), one step at a time, publishing each step and letting go
// of the decoder between steps, so that a reader of earlier bytes waits
// for one step at most while another goroutine reads further ahead.
func (l *Lazy) advance(end uint64) {
	for l.advanceStep(end) {
	}
}

// advanceStep makes one step towards end; false once end is reached or
// the stream failed.
func (l *Lazy) advanceStep(end uint64) bool {
	l.dec.Lock()
	defer l.dec.Unlock()
	l.mu.Lock()
	done, err := l.done, l.err
	l.mu.Unlock()
	if done >= end || err != nil || l.closed {
		return false
	}
	step := uint64(lazyStep)
	if end <= lazyFirstStep {
		step = lazyFirstStep
	}
	target := min(l.size, (end+step-1)/step*step)
	if l.fromCache(end, target) {
		return true
	}
	if err := l.step(target); err != nil {
		l.mu.Lock()
		l.err = &FormatError{Path: l.o.path, Format: l.name, Off: l.off, Msg: err.Error(), Err: err}
		l.mu.Unlock()
		return false
	}
	return true
}

// Prefetch starts decompressing the section up to end in the background
// (a reader that will need it soon: another core can do it meanwhile).
func (l *Lazy) Prefetch(end uint64) {
	if l == nil || l.Done() >= min(end, l.size) {
		return
	}
	go l.advance(end)
}

// cacheKey is the section's index-cache key (CacheKey), computed once,
// when the cache is first asked or written. l.dec is held.
func (l *Lazy) cacheKey() string {
	if !l.keyed {
		l.key, l.keyed = l.o.CacheKey(l.name, l.raw), true
	}
	return l.key
}

// fromCache publishes the cached prefix as far as target (its chunks
// verified as they are reached) when it holds end; false when there is no
// cached prefix that long, or it turns out damaged (then it is dropped
// and the section is decompressed from its start). l.dec is held.
func (l *Lazy) fromCache(end, target uint64) bool {
	if !l.looked {
		l.looked = true
		l.lookCache()
	}
	if l.entry == nil || l.r != nil || l.stored < end {
		return false
	}
	b, ok := l.entry.Verified(sectionHeader + int(target))
	if !ok {
		l.entry, l.stored = nil, 0
		return false
	}
	b = b[sectionHeader:]
	l.mu.Lock()
	if uint64(len(b)) > l.done {
		l.buf, l.done = b, uint64(len(b))
	}
	l.mu.Unlock()
	return true
}

// lookCache maps the section's cache entry, when there is one decoded
// from the compressed bytes this section starts with. l.dec is held.
func (l *Lazy) lookCache() {
	e := CachedSection(l.cacheKey())
	if e == nil {
		return
	}
	h, ok := e.Verified(sectionHeader)
	if !ok || e.Size() < sectionHeader || uint64(e.Size()-sectionHeader) > l.size || !sectionHeaderFits(h, l.size, l.raw) {
		e.Close()
		return
	}
	l.entry, l.stored = e, uint64(e.Size()-sectionHeader)
	l.releases = append(l.releases, e.Close)
}

// step decompresses from where the stream is to target (at most one more
// lazyStep past what readers have) into own, and publishes own when it
// holds more than buf. l.dec is held.
func (l *Lazy) step(target uint64) error {
	if l.r == nil {
		if l.size > maxDecompressedSection {
			return errTooBig(l.size)
		}
		buf, err := allocSection(int(l.size))
		if err != nil {
			return err
		}
		r, closeR, err := l.open(buf)
		if err != nil {
			freeSection(buf)
			return err
		}
		l.r, l.closeR, l.own, l.decoded = r, closeR, buf, 0
		l.releases = append(l.releases, func() { freeSection(buf) })
	}
	to := min(target, l.decoded+lazyStep)
	n, err := l.r.decodeTo(int(to))
	l.decoded = uint64(n)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return errShort(l.decoded, l.size)
	}
	if err != nil {
		return fmt.Errorf("decompressing: %w", err)
	}
	if l.decoded == l.size {
		l.finishStream()
	}
	l.mu.Lock()
	if l.decoded > l.done {
		l.buf, l.done = l.own, l.decoded
	}
	l.mu.Unlock()
	return nil
}

// finishStream drops the decompressor once the section is whole.
func (l *Lazy) finishStream() {
	if l.closeR != nil {
		l.closeR()
	}
	l.r, l.closeR = nil, nil
}

// store writes the decompressed prefix to the index cache when it is more
// than the cache holds.
func (l *Lazy) store() {
	l.dec.Lock()
	defer l.dec.Unlock()
	if !l.closed {
		l.storeLocked()
	}
}

// storeLocked is store with l.dec held.
func (l *Lazy) storeLocked() {
	l.mu.Lock()
	done, buf, err := l.done, l.buf, l.err
	l.mu.Unlock()
	if l.own == nil || done <= l.stored || err != nil || done < CacheMinSize {
		return
	}
	read := len(l.raw)
	if l.r != nil {
		read = l.hdr + l.r.read()
	}
	storeSection(l.cacheKey(), newSectionHeader(l.size, l.raw, read), buf[:done])
	l.stored = done
}

// close stores the decompressed prefix in the index cache when it is more
// than the cache held, and releases the buffers. The object's mu is held.
func (l *Lazy) close() {
	l.dec.Lock()
	defer l.dec.Unlock()
	l.closed = true
	l.storeLocked()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closeR != nil {
		l.closeR()
	}
	for _, f := range l.releases {
		f()
	}
	l.releases, l.buf, l.own, l.r, l.closeR, l.done = nil, nil, nil, nil, nil, 0
}

// NewLazyBytes wraps bytes already in memory (a .dwp unit's contribution,
// a test's section) as a Lazy; nil for nil b.
func NewLazyBytes(name string, b []byte) *Lazy {
	if b == nil {
		return nil
	}
	return &Lazy{name: name, buf: b, done: uint64(len(b)), size: uint64(len(b))}
}
