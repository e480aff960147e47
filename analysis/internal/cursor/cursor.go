// Package cursor reads fixed-size and LEB128 fields from untrusted bytes for
// analysis's parsers (ELF cores, DWARF sections and expressions, call frame
// information, NVIDIA line programs), and defines the one error type they
// report malformed input with (FormatError).
//
// Every read is bounds-checked: a size read from the input is checked against
// the bytes that are there before anything is sliced or allocated. The first
// error sticks: later reads return zero values, so a caller can decode a whole
// structure and check Err once.
package cursor

import (
	"encoding/binary"
	"fmt"
)

// Cursor reads from Data starting at Off.
type Cursor struct {
	Data   []byte
	Order  binary.ByteOrder
	Base   uint64 // offset of Data[0] in the enclosing file or section, for error messages
	Off    int    // next read position within Data
	Format string // FormatError.Format of its errors: the section or file format read
	err    error
}

// New returns a cursor over data; base is data[0]'s offset for error messages.
func New(data []byte, order binary.ByteOrder, base uint64) *Cursor {
	return &Cursor{Data: data, Order: order, Base: base}
}

// Err returns the first error the cursor met, or nil.
func (c *Cursor) Err() error { return c.err }

// Fail records an error at the current position unless one is already recorded.
func (c *Cursor) Fail(format string, args ...any) {
	if c.err == nil {
		c.err = &FormatError{Format: c.Format, Off: int64(c.Pos()), Msg: fmt.Sprintf(format, args...)}
	}
}

// Pos returns the section offset of the cursor's position.
func (c *Cursor) Pos() uint64 { return c.Base + uint64(c.Off) }

// Len returns the number of unread bytes.
func (c *Cursor) Len() int {
	if c.err != nil {
		return 0
	}
	return len(c.Data) - c.Off
}

// Bytes returns the next n bytes (a sub-slice, not a copy).
func (c *Cursor) Bytes(n int) []byte {
	if c.err != nil {
		return nil
	}
	if n < 0 || n > len(c.Data)-c.Off {
		c.Fail("need %d bytes, have %d", n, len(c.Data)-c.Off)
		return nil
	}
	b := c.Data[c.Off : c.Off+n]
	c.Off += n
	return b
}

// Skip advances n bytes.
func (c *Cursor) Skip(n int) { c.Bytes(n) }

// Seek moves to position off within Data.
func (c *Cursor) Seek(off int) {
	if c.err != nil {
		return
	}
	if off < 0 || off > len(c.Data) {
		c.Fail("seek to %d out of range", off)
		return
	}
	c.Off = off
}

// U8 reads one byte.
func (c *Cursor) U8() uint8 {
	b := c.Bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

// U16 reads a 2-byte unsigned value.
func (c *Cursor) U16() uint16 {
	b := c.Bytes(2)
	if b == nil {
		return 0
	}
	return c.Order.Uint16(b)
}

// U32 reads a 4-byte unsigned value.
func (c *Cursor) U32() uint32 {
	b := c.Bytes(4)
	if b == nil {
		return 0
	}
	return c.Order.Uint32(b)
}

// U64 reads an 8-byte unsigned value.
func (c *Cursor) U64() uint64 {
	b := c.Bytes(8)
	if b == nil {
		return 0
	}
	return c.Order.Uint64(b)
}

// Uint reads an n-byte unsigned value (n = 1, 2, 4 or 8).
func (c *Cursor) Uint(n int) uint64 {
	switch n {
	case 1:
		return uint64(c.U8())
	case 2:
		return uint64(c.U16())
	case 4:
		return uint64(c.U32())
	case 8:
		return c.U64()
	}
	c.Fail("unsupported field size %d", n)
	return 0
}

// ULEB128 reads an unsigned LEB128 value (DWARF 5 §7.6). Bits beyond 64 are
// dropped; an encoding longer than 10 bytes is an error.
func (c *Cursor) ULEB128() uint64 {
	var v uint64
	var shift uint
	for i := 0; ; i++ {
		if c.err != nil {
			return 0
		}
		if i >= 10 {
			c.Fail("LEB128 value too long")
			return 0
		}
		b := c.U8()
		if c.err != nil {
			return 0
		}
		v |= uint64(b&0x7f) << shift
		shift += 7
		if b&0x80 == 0 {
			return v
		}
	}
}

// SLEB128 reads a signed LEB128 value (DWARF 5 §7.6).
func (c *Cursor) SLEB128() int64 {
	var v int64
	var shift uint
	for i := 0; ; i++ {
		if c.err != nil {
			return 0
		}
		if i >= 10 {
			c.Fail("LEB128 value too long")
			return 0
		}
		b := c.U8()
		if c.err != nil {
			return 0
		}
		v |= int64(b&0x7f) << shift
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

// CString reads a NUL-terminated string.
func (c *Cursor) CString() string {
	if c.err != nil {
		return ""
	}
	for i := c.Off; i < len(c.Data); i++ {
		if c.Data[i] == 0 {
			s := string(c.Data[c.Off:i])
			c.Off = i + 1
			return s
		}
	}
	c.Fail("unterminated string")
	return ""
}

// FixedString reads a fixed-size field of n bytes holding a string padded
// with NULs: the bytes up to the first NUL.
func (c *Cursor) FixedString(n int) string {
	b := c.Bytes(n)
	for i, ch := range b {
		if ch == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// UnitLength reads a DWARF initial length field (DWARF 5 §7.4): 32 bits, or
// 0xffffffff followed by a 64-bit length.
func (c *Cursor) UnitLength() (length uint64, dwarf64 bool) {
	l := c.U32()
	if l == 0xffffffff {
		return c.U64(), true
	}
	if l >= 0xfffffff0 {
		c.Fail("reserved unit length %#x", l)
		return 0, false
	}
	return uint64(l), false
}

// Offset reads a DWARF section offset: 8 bytes in 64-bit DWARF, else 4.
func (c *Cursor) Offset(dwarf64 bool) uint64 {
	if dwarf64 {
		return c.U64()
	}
	return uint64(c.U32())
}

// I16 reads a 2-byte signed value.
func (c *Cursor) I16() int16 { return int16(c.U16()) }

// I32 reads a 4-byte signed value.
func (c *Cursor) I32() int32 { return int32(c.U32()) }
