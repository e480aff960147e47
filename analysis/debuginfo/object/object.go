package object

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"syscall"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
	"github.com/faultline-dev/faultline/analysis/regular"
)

// maxDecompressedSection caps the size of one decompressed section.
const maxDecompressedSection = 1 << 30

// FormatError reports malformed data in an object file: Path is the file,
// Format the section (when set; Off is then a section offset, else a file
// offset). It is analysis's one FormatError type.
type FormatError = cursor.FormatError

// Object is an ELF file mapped read-only. Sections are slices of the mapping;
// compressed sections are decompressed once, on demand, size-capped.
type Object struct {
	path string
	Data []byte // the whole mapping (or a heap copy for tiny/unmappable files)
	mmap bool
	Elf  *elf.File

	mu          sync.Mutex
	lazies      map[string]*Lazy // sections asked for, by name (nil: absent)
	buildID     []byte
	buildIDDone bool

	mini     *Object // .gnu_debugdata, decoded once (minidebug.go)
	miniErr  error
	miniDone bool
}

// OpenObject maps the ELF file at path.
func OpenObject(path string) (*Object, error) {
	f, st, err := regular.Open(path) // paths come from cores and debug links: never a FIFO or a device
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := st.Size()
	if size < 16 {
		return nil, &FormatError{Path: path, Msg: "file too small for an ELF header"}
	}
	if int64(int(size)) != size {
		return nil, &FormatError{Path: path, Msg: "file too large to map"}
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap: %w", path, err)
	}
	o, err := newObject(path, data)
	if err != nil {
		syscall.Munmap(data)
		return nil, err
	}
	o.mmap = true
	return o, nil
}

// NewObjectFromBytes wraps an in-memory ELF image (used by tests and fuzzing).
func NewObjectFromBytes(name string, data []byte) (*Object, error) {
	return newObject(name, data)
}

func newObject(path string, data []byte) (o *Object, err error) {
	// debug/elf is careful, but never let a malformed file take the process down.
	defer func() {
		if r := recover(); r != nil {
			o, err = nil, &FormatError{Path: path, Msg: fmt.Sprintf("malformed ELF: %v", r)}
		}
	}()
	if len(data) < 4 || string(data[:4]) != elf.ELFMAG {
		// Named, never quoted: the file may be anything a symlink points at.
		return nil, &FormatError{Path: path, Msg: "not an ELF file (bad magic)"}
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Object{path: path, Data: data, Elf: ef, lazies: map[string]*Lazy{}}, nil
}

// StoreCache writes the sections decompressed since the object was opened
// (or since the last StoreCache) to the index cache, as Close does, and
// keeps them: a long-lived process (the language server's module pool)
// leaves them for the next process without closing the file.
func (o *Object) StoreCache() {
	if o == nil {
		return
	}
	o.mu.Lock()
	lazies := make([]*Lazy, 0, len(o.lazies))
	for _, l := range o.lazies {
		if l != nil {
			lazies = append(lazies, l)
		}
	}
	o.mu.Unlock()
	for _, l := range lazies {
		l.store()
	}
}

// Path is the file the object was opened from.
func (o *Object) Path() string { return o.path }

// Close stores the sections decompressed since the object was opened in
// the index cache (lazy.go) and unmaps the file. Slices returned by Section
// and Lazy must not be used after.
func (o *Object) Close() error {
	if o == nil || o.Data == nil {
		return nil
	}
	// Each section writes its own cache entry: side by side.
	var wg sync.WaitGroup
	o.mu.Lock()
	for name, l := range o.lazies {
		if l != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.close()
			}()
		}
		delete(o.lazies, name)
	}
	o.mu.Unlock()
	wg.Wait()
	var err error
	if o.mmap {
		err = syscall.Munmap(o.Data)
	}
	o.Data = nil
	return err
}

// ELF gives the header, program header and section header metadata.
func (o *Object) ELF() *elf.File { return o.Elf }

// RawSection returns the bytes of s in the file, or nil for SHT_NOBITS or
// sections that lie outside the file.
func (o *Object) RawSection(s *elf.Section) []byte {
	if s.Type == elf.SHT_NOBITS {
		return nil
	}
	end := s.Offset + s.FileSize
	if end < s.Offset || end > uint64(len(o.Data)) {
		return nil
	}
	return o.Data[s.Offset:end:end]
}

// Section returns the contents and link-time address of the named section.
// Compressed sections (SHF_COMPRESSED with ELFCOMPRESS_ZLIB or
// ELFCOMPRESS_ZSTD, gABI "Section Compression", and legacy GNU .zdebug_*)
// are decompressed whole, once (Lazy reads only a prefix). ok is false if
// the section is missing, has no file bytes, or cannot be decompressed.
func (o *Object) Section(name string) (data []byte, addr uint64, ok bool) {
	l := o.Lazy(name)
	if l == nil {
		return nil, 0, false
	}
	d := l.All()
	if l.Err() != nil || uint64(len(d)) < l.Size() {
		return nil, 0, false
	}
	return d, l.addr, true
}

// HasSection reports whether the named section (or its .zdebug_ form) is
// present with file bytes and, if compressed, a readable header, without
// decompressing anything.
func (o *Object) HasSection(name string) bool {
	l := o.Lazy(name)
	return l != nil && (l.size > 0 || l.Err() == nil)
}

// Lazy returns the named section to be read as far as a reader needs (see
// Lazy), nil when it is missing or has no file bytes. A compressed section
// whose header cannot be read gives a Lazy of size 0 whose Err says why.
func (o *Object) Lazy(name string) *Lazy {
	if o == nil || o.Elf == nil {
		return nil
	}
	o.mu.Lock()
	l, ok := o.lazies[name]
	o.mu.Unlock()
	if ok {
		return l
	}
	l = o.newLazy(name) // unlocked: the cache key takes o.mu for the build-id
	o.mu.Lock()
	defer o.mu.Unlock()
	if prev, ok := o.lazies[name]; ok {
		if l != nil {
			l.close()
		}
		return prev
	}
	if o.lazies != nil {
		o.lazies[name] = l
	}
	return l
}

// newLazy finds the section and reads its compression header.
func (o *Object) newLazy(name string) *Lazy {
	s := o.Elf.Section(name)
	gnuZ := false
	if s == nil && len(name) > 1 && name[0] == '.' {
		if s = o.Elf.Section(".z" + name[1:]); s != nil {
			gnuZ = true
		}
	}
	if s == nil {
		return nil
	}
	raw := o.RawSection(s)
	if raw == nil {
		return nil
	}
	l := &Lazy{o: o, name: name, addr: s.Addr, off: int64(s.Offset)}
	if s.Flags&elf.SHF_COMPRESSED == 0 && !gnuZ {
		l.buf, l.done, l.size = raw, uint64(len(raw)), uint64(len(raw))
		return l
	}
	var st stream
	var err error
	if gnuZ {
		st, err = gnuStream(raw)
	} else {
		st, err = elfStream(raw, o.Elf.Class, o.Elf.ByteOrder)
	}
	if err != nil {
		l.err = &FormatError{Path: o.path, Format: name, Off: l.off, Msg: err.Error(), Err: err}
		return l
	}
	l.size, l.open, l.raw, l.hdr = st.size, st.open, raw, st.hdr
	return l
}

// BuildID returns the NT_GNU_BUILD_ID descriptor, or nil.
func (o *Object) BuildID() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.buildIDDone {
		return o.buildID
	}
	o.buildIDDone = true
	// Prefer PT_NOTE segments (what the loader maps), then SHT_NOTE sections.
	for _, p := range o.Elf.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		if id := findBuildIDNote(o.slice(p.Off, p.Filesz), o.Elf.ByteOrder); id != nil {
			o.buildID = id
			return id
		}
	}
	for _, s := range o.Elf.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		if id := findBuildIDNote(o.RawSection(s), o.Elf.ByteOrder); id != nil {
			o.buildID = id
			return id
		}
	}
	return nil
}

func (o *Object) slice(off, n uint64) []byte {
	end := off + n
	if end < off || end > uint64(len(o.Data)) {
		return nil
	}
	return o.Data[off:end:end]
}

// findBuildIDNote walks ELF notes (gABI "Note Section": namesz, descsz, type,
// name padded to 4, desc padded to 4) for NT_GNU_BUILD_ID (3) owned by "GNU".
func findBuildIDNote(b []byte, bo binary.ByteOrder) []byte {
	const ntGNUBuildID = 3
	for len(b) >= 12 {
		namesz := uint64(bo.Uint32(b[0:]))
		descsz := uint64(bo.Uint32(b[4:]))
		typ := bo.Uint32(b[8:])
		b = b[12:]
		nameEnd := (namesz + 3) &^ 3
		descEnd := (descsz + 3) &^ 3
		if nameEnd > uint64(len(b)) || nameEnd+descsz > uint64(len(b)) {
			return nil
		}
		name := b[:namesz]
		desc := b[nameEnd : nameEnd+descsz]
		if typ == ntGNUBuildID && string(bytes.TrimRight(name, "\x00")) == "GNU" && len(desc) > 0 {
			return append([]byte(nil), desc...)
		}
		if nameEnd+descEnd > uint64(len(b)) {
			return nil
		}
		b = b[nameEnd+descEnd:]
	}
	return nil
}

// DebugLink returns the .gnu_debuglink file name and CRC32 (GDB manual,
// "Debugging Information in Separate Files": NUL-terminated name, padding to
// 4 bytes, 4-byte CRC in the object's byte order).
func (o *Object) DebugLink() (name string, crc uint32, ok bool) {
	d, _, found := o.Section(".gnu_debuglink")
	if !found {
		return "", 0, false
	}
	i := bytes.IndexByte(d, 0)
	if i <= 0 {
		return "", 0, false
	}
	off := (i + 4) &^ 3
	if off+4 > len(d) {
		return "", 0, false
	}
	return string(d[:i]), o.Elf.ByteOrder.Uint32(d[off:]), true
}

// ReadAt reads the file-backed bytes of PT_LOAD segments at link-time
// address vaddr. It returns io.EOF when vaddr is not file-backed, and a short
// count with io.ErrUnexpectedEOF when the read runs off the segment.
func (o *Object) ReadAt(p []byte, vaddr uint64) (int, error) {
	for _, ph := range o.Elf.Progs {
		if ph.Type != elf.PT_LOAD || vaddr < ph.Vaddr || vaddr-ph.Vaddr >= ph.Filesz {
			continue
		}
		seg := o.slice(ph.Off, ph.Filesz)
		if seg == nil {
			return 0, &FormatError{Path: o.path, Off: int64(ph.Off), Msg: "PT_LOAD segment outside the file"}
		}
		n := copy(p, seg[vaddr-ph.Vaddr:])
		if n < len(p) {
			return n, io.ErrUnexpectedEOF
		}
		return n, nil
	}
	return 0, io.EOF
}

// FirstLoadVaddr is the p_vaddr of the first PT_LOAD segment (with the
// mapping's start and NT_FILE offset it gives the load bias).
func (o *Object) FirstLoadVaddr() (vaddr, off uint64, ok bool) {
	for _, ph := range o.Elf.Progs {
		if ph.Type == elf.PT_LOAD {
			return ph.Vaddr, ph.Off, true
		}
	}
	return 0, 0, false
}
