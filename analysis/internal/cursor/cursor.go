// Package cursor reads fixed-size and LEB128 fields from untrusted bytes for
// analysis's parsers (call frame information, DWARF expressions, NVIDIA line
// programs).
//
// Every read is bounds-checked. The first error sticks: later reads return
// zero values, so a caller can decode a whole structure and check Err once.
package cursor

import (
	"encoding/binary"
	"fmt"
)

// Error is a decoding error at a byte offset. Off is relative to the start of
// the section (or expression) the cursor was created over, plus its Base.
type Error struct {
	Off uint64
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("offset 0x%x: %s", e.Off, e.Msg) }

// Cursor reads from Data starting at Off.
type Cursor struct {
	Data  []byte
	Order binary.ByteOrder
	Base  uint64 // offset of Data[0] in the enclosing section, for error messages
	Off   int    // next read position within Data
	err   error
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
		c.err = &Error{Off: c.Base + uint64(c.Off), Msg: fmt.Sprintf(format, args...)}
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
