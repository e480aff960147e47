package linemd5

import (
	"encoding/binary"
	"errors"
)

// reader reads a section; its first error sticks, and every read after it
// returns zero values.
type reader struct {
	b     []byte
	off   int
	order binary.ByteOrder
	err   error
}

var errShort = errors.New("header runs past the unit")

func (r *reader) remaining() int { return len(r.b) - r.off }

// bytes returns the next n bytes, or nil and the sticky error.
func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > r.remaining() {
		r.err = errShort
		return nil
	}
	b := r.b[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) skip(n int) { r.bytes(n) }

func (r *reader) u8() uint8 {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return r.order.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return r.order.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return r.order.Uint64(b)
	}
	return 0
}

// uleb reads an unsigned LEB128 number (DWARF 5 section 7.6); bits past
// 64 are dropped.
func (r *reader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b := r.bytes(1)
		if b == nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(b[0]&0x7f) << shift
		}
		if b[0]&0x80 == 0 {
			return v
		}
	}
}

// sleb reads a signed LEB128 number.
func (r *reader) sleb() int64 {
	var v int64
	var shift uint
	for {
		b := r.bytes(1)
		if b == nil {
			return 0
		}
		if shift < 64 {
			v |= int64(b[0]&0x7f) << shift
		}
		shift += 7
		if b[0]&0x80 == 0 {
			if shift < 64 && b[0]&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

// cstring reads a NUL-terminated string.
func (r *reader) cstring() string {
	if r.err != nil {
		return ""
	}
	for i := r.off; i < len(r.b); i++ {
		if r.b[i] == 0 {
			s := string(r.b[r.off:i])
			r.off = i + 1
			return s
		}
	}
	r.err = errShort
	return ""
}
