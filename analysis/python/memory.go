package python

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Process is the memory and symbols of a process (a core, or a live one):
// analysis's process implements it.
type Process interface {
	ReadMemory(addr uint64, b []byte) (int, error)
	// SymbolAddress returns the run-time address of a global symbol.
	SymbolAddress(name string) (uint64, bool)
}

// Caps on what one walk reads from memory that may be corrupt.
const (
	maxThreads      = 4096
	maxInterpreters = 64
	maxFrames       = 4096      // per thread
	maxStringChars  = 4096      // file and function names
	maxLineTable    = 1 << 20   // bytes of co_linetable
	maxCodeUnits    = 1 << 24   // instruction offset within a code object
	maxPointer      = 1<<47 - 1 // x86-64 user space
)

// memory reads little-endian values, remembering the first failure.
type memory struct {
	p   Process
	err error
}

func (m *memory) read(addr uint64, n int) []byte {
	b := make([]byte, n)
	if addr == 0 || addr > maxPointer {
		m.fail(fmt.Errorf("bad pointer %#x", addr))
		return b
	}
	if k, err := m.p.ReadMemory(addr, b); k < n {
		if err == nil {
			err = fmt.Errorf("short read")
		}
		m.fail(fmt.Errorf("reading %d bytes at %#x: %w", n, addr, err))
	}
	return b
}

func (m *memory) fail(err error) {
	if m.err == nil {
		m.err = err
	}
}

func (m *memory) u64(addr uint64) uint64 { return binary.LittleEndian.Uint64(m.read(addr, 8)) }
func (m *memory) u32(addr uint64) uint32 { return binary.LittleEndian.Uint32(m.read(addr, 4)) }
func (m *memory) u8(addr uint64) uint8   { return m.read(addr, 1)[0] }

// str reads a str object (PyUnicodeObject, compact form: every string a
// code object names is one).
func (m *memory) str(l *layout, addr uint64) string {
	if addr == 0 {
		return ""
	}
	state := m.u32(addr + l.unicodeState)
	n := m.u64(addr + l.unicodeLength)
	if m.err != nil {
		return ""
	}
	// state: interned:2, kind:3, compact:1, ascii:1 (Include/cpython/unicodeobject.h)
	kind, compact, ascii := int(state>>2&7), state>>5&1 == 1, state>>6&1 == 1
	if !compact {
		m.fail(fmt.Errorf("string at %#x is not compact", addr))
		return ""
	}
	if kind != 1 && kind != 2 && kind != 4 {
		m.fail(fmt.Errorf("string at %#x has kind %d", addr, kind))
		return ""
	}
	truncated := n > maxStringChars
	n = min(n, maxStringChars)
	data := addr + l.compactUnicodeSize
	if ascii {
		data = addr + l.asciiObjectSize
	}
	raw := m.read(data, int(n)*kind)
	if m.err != nil {
		return ""
	}
	var b strings.Builder
	for i := 0; i < int(n); i++ {
		var r rune
		switch kind {
		case 1:
			r = rune(raw[i])
		case 2:
			r = rune(binary.LittleEndian.Uint16(raw[2*i:]))
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
		case 4:
			r = rune(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		if !utf8.ValidRune(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	if truncated {
		b.WriteString("…")
	}
	return b.String()
}

// bytes reads a bytes object's contents, at most limit bytes.
func (m *memory) bytes(l *layout, addr uint64, limit int) []byte {
	n := m.u64(addr + l.bytesSize)
	if m.err != nil {
		return nil
	}
	if n > uint64(limit) {
		m.fail(fmt.Errorf("bytes object at %#x claims %d bytes", addr, n))
		return nil
	}
	return m.read(addr+l.bytesData, int(n))
}
