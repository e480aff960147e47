package cursor

import (
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// The first error sticks, at the offset where it happened (plus Base), and
// later reads return zero values.
func TestFirstErrorSticks(t *testing.T) {
	c := New([]byte{1, 2, 3}, binary.LittleEndian, 0x100)
	c.Format = ".debug_line"
	if v := c.U16(); v != 0x0201 {
		t.Fatalf("U16 = %#x", v)
	}
	if v := c.U32(); v != 0 {
		t.Errorf("U32 past the end = %#x, want 0", v)
	}
	if v := c.U8(); v != 0 || c.Len() != 0 {
		t.Errorf("U8 after the error = %d, Len %d; want 0, 0", v, c.Len())
	}
	var fe *FormatError
	if !errors.As(c.Err(), &fe) || fe.Off != 0x102 || fe.Format != ".debug_line" {
		t.Fatalf("Err = %#v", c.Err())
	}
	if got, want := c.Err().Error(), ".debug_line: offset 0x102: need 4 bytes, have 1"; got != want {
		t.Errorf("Err() = %q, want %q", got, want)
	}
}

// Sizes read from the input are checked before anything is sliced: a
// negative or huge length, an endless LEB128, a seek outside the data.
func TestCaps(t *testing.T) {
	for name, read := range map[string]func(c *Cursor){
		"negative length":  func(c *Cursor) { c.Bytes(-1) },
		"huge length":      func(c *Cursor) { c.Skip(int(^uint(0) >> 1)) },
		"LEB128 too long":  func(c *Cursor) { c.ULEB128() },
		"SLEB128 too long": func(c *Cursor) { c.SLEB128() },
		"seek":             func(c *Cursor) { c.Seek(100) },
		"field size":       func(c *Cursor) { c.Uint(3) },
		"unterminated":     func(c *Cursor) { c.Skip(11); c.CString() },
		"reserved length":  func(c *Cursor) { c.Skip(11); c.UnitLength() },
	} {
		data := append([]byte(strings.Repeat("\x80", 11)), 0xf0, 0xff, 0xff, 0xff)
		c := New(data, binary.LittleEndian, 0)
		read(c)
		if c.Err() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestFixedFieldsAndDWARF(t *testing.T) {
	data := []byte{'a', 'b', 0, 'z', 0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff}
	c := New(data, binary.LittleEndian, 0)
	if s := c.FixedString(4); s != "ab" {
		t.Errorf("FixedString = %q", s)
	}
	if n, is64 := c.UnitLength(); n != 8 || !is64 {
		t.Errorf("UnitLength = %d, %v; want 8, true", n, is64)
	}
	if v := c.I16(); v != -2 || c.Err() != nil {
		t.Errorf("I16 = %d, %v", v, c.Err())
	}
}

// Unwrap gives the cause; the message leaves out what is unknown.
func TestFormatError(t *testing.T) {
	e := &FormatError{Format: "elfcore", Off: NoOffset, Msg: "reading the core", Err: io.ErrUnexpectedEOF}
	if !errors.Is(e, io.ErrUnexpectedEOF) {
		t.Error("errors.Is does not reach the cause")
	}
	for _, c := range []struct {
		e    *FormatError
		want string
	}{
		{e, "elfcore: reading the core"},
		{&FormatError{Path: "/lib/libc.so.6", Format: ".debug_info", Off: 0x40, Msg: "unit runs past the section"},
			"/lib/libc.so.6 .debug_info: offset 0x40: unit runs past the section"},
		{&FormatError{Off: 0, Msg: "x"}, "offset 0x0: x"},
		{&FormatError{Format: "ELF header", Off: NoOffset, Err: io.EOF}, "ELF header: EOF"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}
