package elfcore

import (
	"encoding/binary"
	"fmt"
)

// cursor reads fixed-size fields from an untrusted byte slice. Every read is
// bounds-checked; the first error sticks and later reads return zero values,
// so callers can decode a whole structure and check err once.
type cursor struct {
	data  []byte
	order binary.ByteOrder
	base  int64 // file offset of data[0], for error messages
	off   int   // next read position within data
	err   error
}

func newCursor(data []byte, order binary.ByteOrder, base int64) *cursor {
	return &cursor{data: data, order: order, base: base}
}

// fileOff returns the file offset of the cursor's position.
func (c *cursor) fileOff() int64 { return c.base + int64(c.off) }

func (c *cursor) fail(n int) {
	if c.err == nil {
		c.err = &FormatError{Off: c.fileOff(), Msg: fmt.Sprintf("need %d bytes, have %d", n, len(c.data)-c.off)}
	}
}

// bytes returns the next n bytes (a sub-slice, not a copy).
func (c *cursor) bytes(n int) []byte {
	if c.err != nil {
		return nil
	}
	if n < 0 || n > len(c.data)-c.off {
		c.fail(n)
		return nil
	}
	b := c.data[c.off : c.off+n]
	c.off += n
	return b
}

func (c *cursor) skip(n int) { c.bytes(n) }

// seek moves to position off within data.
func (c *cursor) seek(off int) {
	if c.err != nil {
		return
	}
	if off < 0 || off > len(c.data) {
		c.err = &FormatError{Off: c.base + int64(off), Msg: "seek out of range"}
		return
	}
	c.off = off
}

func (c *cursor) u8() uint8 {
	b := c.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (c *cursor) u16() uint16 {
	b := c.bytes(2)
	if b == nil {
		return 0
	}
	return c.order.Uint16(b)
}

func (c *cursor) u32() uint32 {
	b := c.bytes(4)
	if b == nil {
		return 0
	}
	return c.order.Uint32(b)
}

func (c *cursor) u64() uint64 {
	b := c.bytes(8)
	if b == nil {
		return 0
	}
	return c.order.Uint64(b)
}

func (c *cursor) i16() int16 { return int16(c.u16()) }
func (c *cursor) i32() int32 { return int32(c.u32()) }

// cstring returns the bytes of a fixed-size field of n bytes up to its first
// NUL.
func (c *cursor) cstring(n int) string {
	b := c.bytes(n)
	for i, ch := range b {
		if ch == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
