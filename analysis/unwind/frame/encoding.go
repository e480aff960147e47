package frame

import (
	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// DW_EH_PE pointer encodings (Linux Standard Base Core, §10.5 "DWARF
// Extensions", Tables 10-5 and 10-6). The low nibble is the value format, the
// next three bits how it is applied, and 0x80 marks an indirect pointer.
const (
	DW_EH_PE_absptr  = 0x00
	DW_EH_PE_uleb128 = 0x01
	DW_EH_PE_udata2  = 0x02
	DW_EH_PE_udata4  = 0x03
	DW_EH_PE_udata8  = 0x04
	DW_EH_PE_signed  = 0x08
	DW_EH_PE_sleb128 = 0x09
	DW_EH_PE_sdata2  = 0x0a
	DW_EH_PE_sdata4  = 0x0b
	DW_EH_PE_sdata8  = 0x0c

	DW_EH_PE_pcrel   = 0x10
	DW_EH_PE_textrel = 0x20
	DW_EH_PE_datarel = 0x30
	DW_EH_PE_funcrel = 0x40
	DW_EH_PE_aligned = 0x50

	DW_EH_PE_indirect = 0x80
	DW_EH_PE_omit     = 0xff
)

// pointerBases are the bases the application bits of an encoding refer to.
// All are link-time addresses.
type pointerBases struct {
	section uint64 // address of the cursor's Data[0] (for pcrel and aligned)
	text    uint64 // DW_EH_PE_textrel base
	data    uint64 // DW_EH_PE_datarel base (.eh_frame_hdr start, or the GOT)
	fn      uint64 // DW_EH_PE_funcrel base (the FDE's initial location)
}

// readEncoded reads one pointer in encoding enc. It returns the value and
// whether it is indirect (the address of the pointer, not the pointer); the
// caller dereferences indirect values when it needs them.
func readEncoded(c *cursor.Cursor, enc byte, ptrSize int, b pointerBases) (v uint64, indirect bool) {
	if enc == DW_EH_PE_omit {
		return 0, false
	}
	fieldAddr := b.section + uint64(c.Off)
	if enc&0x70 == DW_EH_PE_aligned {
		// Aligned: the value is an absolute pointer at the next ptrSize
		// boundary of the run-time address.
		pad := int((uint64(ptrSize) - fieldAddr%uint64(ptrSize)) % uint64(ptrSize))
		c.Skip(pad)
		return c.Uint(ptrSize), enc&DW_EH_PE_indirect != 0
	}
	switch enc & 0x0f {
	case DW_EH_PE_absptr:
		v = c.Uint(ptrSize)
	case DW_EH_PE_uleb128:
		v = c.ULEB128()
	case DW_EH_PE_udata2:
		v = uint64(c.U16())
	case DW_EH_PE_udata4:
		v = uint64(c.U32())
	case DW_EH_PE_udata8:
		v = c.U64()
	case DW_EH_PE_sleb128:
		v = uint64(c.SLEB128())
	case DW_EH_PE_sdata2:
		v = uint64(int64(int16(c.U16())))
	case DW_EH_PE_sdata4:
		v = uint64(int64(int32(c.U32())))
	case DW_EH_PE_sdata8:
		v = c.U64()
	default:
		c.Fail("unknown pointer encoding 0x%02x", enc)
		return 0, false
	}
	switch enc & 0x70 {
	case DW_EH_PE_absptr:
	case DW_EH_PE_pcrel:
		v += fieldAddr
	case DW_EH_PE_textrel:
		v += b.text
	case DW_EH_PE_datarel:
		v += b.data
	case DW_EH_PE_funcrel:
		v += b.fn
	default:
		c.Fail("unknown pointer application 0x%02x", enc&0x70)
		return 0, false
	}
	if ptrSize == 4 {
		v &= 0xffffffff
	}
	return v, enc&DW_EH_PE_indirect != 0
}

// encodedSize returns the fixed size of a value in encoding enc, or 0 when it
// has no fixed size (LEB128, omit).
func encodedSize(enc byte, ptrSize int) int {
	if enc == DW_EH_PE_omit {
		return 0
	}
	switch enc & 0x0f {
	case DW_EH_PE_absptr:
		return ptrSize
	case DW_EH_PE_udata2, DW_EH_PE_sdata2:
		return 2
	case DW_EH_PE_udata4, DW_EH_PE_sdata4:
		return 4
	case DW_EH_PE_udata8, DW_EH_PE_sdata8:
		return 8
	}
	return 0
}
