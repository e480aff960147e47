package debuginfo

import (
	"encoding/binary"
	"fmt"
)

// cursor reads little pieces of a section. Its first error sticks: after it,
// every read returns zero values, so callers check err once at the end of a
// record.
type cursor struct {
	section string
	data    []byte
	base    uint64 // section offset of data[0]
	off     int
	bo      binary.ByteOrder
	err     error
}

func (c *cursor) fail(msg string) {
	if c.err == nil {
		c.err = &FormatError{Section: c.section, Off: int64(c.base) + int64(c.off), Msg: msg}
	}
}

// pos is the section offset of the next byte.
func (c *cursor) pos() uint64 { return c.base + uint64(c.off) }

func (c *cursor) left() int { return len(c.data) - c.off }

func (c *cursor) bytes(n uint64) []byte {
	if c.err != nil {
		return nil
	}
	if n > uint64(c.left()) {
		c.fail(fmt.Sprintf("need %d bytes, have %d", n, c.left()))
		c.off = len(c.data)
		return nil
	}
	b := c.data[c.off : c.off+int(n)]
	c.off += int(n)
	return b
}

func (c *cursor) skip(n uint64) { c.bytes(n) }

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
	return c.bo.Uint16(b)
}

func (c *cursor) u32() uint32 {
	b := c.bytes(4)
	if b == nil {
		return 0
	}
	return c.bo.Uint32(b)
}

func (c *cursor) u64() uint64 {
	b := c.bytes(8)
	if b == nil {
		return 0
	}
	return c.bo.Uint64(b)
}

// uint reads an n-byte unsigned integer (n is 1, 2, 4 or 8).
func (c *cursor) uint(n int) uint64 {
	switch n {
	case 1:
		return uint64(c.u8())
	case 2:
		return uint64(c.u16())
	case 4:
		return uint64(c.u32())
	case 8:
		return c.u64()
	}
	c.fail(fmt.Sprintf("unsupported integer size %d", n))
	return 0
}

// uleb reads an unsigned LEB128 (DWARF 5 §7.6).
func (c *cursor) uleb() uint64 {
	var v uint64
	var shift uint
	for {
		b := c.u8()
		if c.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			return v
		}
	}
}

// sleb reads a signed LEB128 (DWARF 5 §7.6).
func (c *cursor) sleb() int64 {
	var v int64
	var shift uint
	var b uint8
	for {
		b = c.u8()
		if c.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			break
		}
	}
	if shift < 64 && b&0x40 != 0 {
		v |= -1 << shift
	}
	return v
}

// cstr reads a NUL-terminated string.
func (c *cursor) cstr() string {
	if c.err != nil {
		return ""
	}
	for i := c.off; i < len(c.data); i++ {
		if c.data[i] == 0 {
			s := string(c.data[c.off:i])
			c.off = i + 1
			return s
		}
	}
	c.fail("unterminated string")
	c.off = len(c.data)
	return ""
}

// unitLength reads an initial length field (DWARF 5 §7.4): 32-bit, or
// 0xffffffff followed by a 64-bit length.
func (c *cursor) unitLength() (length uint64, dwarf64 bool) {
	l := c.u32()
	if l == 0xffffffff {
		return c.u64(), true
	}
	if l >= 0xfffffff0 {
		c.fail(fmt.Sprintf("reserved unit length %#x", l))
		return 0, false
	}
	return uint64(l), false
}

// offset reads a section offset: 8 bytes in 64-bit DWARF, else 4.
func (c *cursor) offset(dwarf64 bool) uint64 {
	if dwarf64 {
		return c.u64()
	}
	return uint64(c.u32())
}

// stringAt returns the NUL-terminated string at off in a string section.
func stringAt(sec []byte, off uint64) (string, bool) {
	if off >= uint64(len(sec)) {
		return "", false
	}
	b := sec[off:]
	for i, ch := range b {
		if ch == 0 {
			return string(b[:i]), true
		}
	}
	return "", false
}
