package elfcore

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"sort"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// ReadMemory copies process memory at addr into p from the PT_LOAD
// segments' file bytes. A read may span adjacent segments. It returns the
// number of bytes copied; when that is less than len(p) the error is a
// *MemoryError for the first address that is not in the core (outside all
// segments, or inside a segment but beyond the bytes dumped to the file).
// ReadMemory is safe for concurrent use.
func (c *Core) ReadMemory(addr uint64, p []byte) (n int, err error) {
	defer guardFault(debug.SetPanicOnFault(true), &err)
	for n < len(p) {
		a := addr + uint64(n)
		if a < addr { // wrapped past 2^64
			return n, &MemoryError{Addr: a}
		}
		b, merr := c.contiguous(a, uint64(len(p)-n))
		if merr != nil {
			return n, merr
		}
		n += copy(p[n:], b)
	}
	return n, nil
}

// Slice returns size bytes of process memory at addr. When the range lies
// in one segment the result is a sub-slice of the mapped core (no copy),
// valid until Close and must not be modified; a range spanning adjacent
// segments is copied. A range that is not entirely in the core gives a
// *MemoryError.
func (c *Core) Slice(addr, size uint64) ([]byte, error) {
	b, err := c.contiguous(addr, size)
	if err != nil || uint64(len(b)) == size {
		return b, err
	}
	if size > uint64(len(c.data)) { // cannot be in the core: avoid a huge allocation
		return nil, &MemoryError{Addr: addr + uint64(len(b))}
	}
	p := make([]byte, size)
	n, err := c.ReadMemory(addr, p)
	if err != nil {
		return nil, err
	}
	return p[:n], nil
}

// contiguous returns up to size bytes of the segment bytes that hold addr
// (at least one byte), or a *MemoryError.
func (c *Core) contiguous(addr, size uint64) ([]byte, error) {
	if c.data == nil {
		return nil, ErrClosed
	}
	i := c.segmentIndex(addr)
	if i < 0 {
		return nil, &MemoryError{Addr: addr}
	}
	s := &c.Segments[i]
	rel := addr - s.Vaddr
	if rel >= s.Filesz {
		return nil, &MemoryError{Addr: addr, NotDumped: true}
	}
	k := min(s.Filesz-rel, size)
	off := s.Offset + rel
	if c.pager != nil {
		return c.pager.bytesAt(off, k)
	}
	return c.data[off : off+k : off+k], nil
}

// segmentIndex returns the index of the segment that contains addr,
// preferring one whose dumped bytes cover it when segments overlap; -1 if
// none does.
func (c *Core) segmentIndex(addr uint64) int {
	segs := c.Segments
	i := sort.Search(len(segs), func(i int) bool { return segs[i].Vaddr > addr }) - 1
	found := -1
	for j := i; j >= 0 && c.maxEnd[j] > addr; j-- {
		s := &segs[j]
		if addr >= s.End() {
			continue
		}
		if addr-s.Vaddr < s.Filesz {
			return j
		}
		if found < 0 {
			found = j
		}
	}
	return found
}

// guardFault restores the SetPanicOnFault setting and turns a memory fault
// on the mapped file (SIGBUS when the file was truncated after it was
// mapped) into a *FormatError instead of a crash.
func guardFault(old bool, err *error) {
	debug.SetPanicOnFault(old)
	if r := recover(); r != nil {
		if re, ok := r.(runtime.Error); ok {
			if _, ok := r.(interface{ Addr() uintptr }); ok {
				*err = &FormatError{Format: "elfcore", Off: cursor.NoOffset, Msg: "memory fault reading the mapped core (was the file truncated while open?): " + re.Error()}
				return
			}
		}
		panic(r)
	}
}

// Auxiliary vector types (linux/include/uapi/linux/auxvec.h).
const (
	AT_PHDR         = 3  // program headers of the executable
	AT_PAGESZ       = 6  // system page size
	AT_BASE         = 7  // base address of the interpreter (ld.so)
	AT_ENTRY        = 9  // entry point of the executable
	AT_PLATFORM     = 15 // string identifying the CPU
	AT_HWCAP        = 16 // CPU capabilities
	AT_RANDOM       = 25 // address of 16 random bytes
	AT_HWCAP2       = 26
	AT_EXECFN       = 31 // filename of the executed program
	AT_SYSINFO_EHDR = 33 // ELF header of the vDSO
)

// AuxVal returns the value of the first auxiliary-vector entry of type typ.
func (c *Core) AuxVal(typ uint64) (uint64, bool) {
	for _, e := range c.Auxv {
		if e.Type == typ {
			return e.Val, true
		}
	}
	return 0, false
}

// ExecFn returns the path the process was executed with (the string at
// AT_EXECFN in core memory), or "" if it is not in the core.
func (c *Core) ExecFn() string {
	addr, ok := c.AuxVal(AT_EXECFN)
	if !ok {
		return ""
	}
	return c.ReadCString(addr, maxExecFnLength)
}

// ReadCString reads a NUL-terminated string of at most max bytes at addr. It
// returns "" if the memory is not in the core or no NUL is found in time.
func (c *Core) ReadCString(addr uint64, max int) string {
	var out []byte
	for len(out) < max {
		b, err := c.contiguous(addr+uint64(len(out)), uint64(max-len(out)))
		if err != nil {
			return ""
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return string(append(out, b[:i]...))
		}
		out = append(out, b...)
	}
	return ""
}
