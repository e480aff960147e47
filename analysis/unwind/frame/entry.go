package frame

import (
	"fmt"
	"strings"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// CIE is a Common Information Entry (DWARF 5 §6.4.1; for .eh_frame the Linux
// Standard Base Core §10.6.1.1 variant with augmentation data).
type CIE struct {
	Offset        uint64 // section offset of the entry
	Version       uint8  // 1 (.eh_frame, DWARF 2), 3 (DWARF 3) or 4 (DWARF 4/5)
	Augmentation  string
	AddressSize   uint8 // DWARF 4 CIE field; the table's address size before that
	SegmentSize   uint8
	CodeAlign     uint64
	DataAlign     int64
	RAColumn      uint64 // return address register (column)
	FDEEncoding   byte   // 'R': encoding of FDE pc_begin / pc_range
	LSDAEncoding  byte   // 'L': encoding of the FDE's LSDA pointer
	Personality   uint64 // 'P': personality routine (or its address, if indirect)
	SignalFrame   bool   // 'S': FDEs using this CIE describe signal trampolines
	HasAugData    bool   // augmentation starts with 'z'
	Initial       []byte // initial instructions
	instrsOffset  uint64 // section offset of Initial, for error messages
	personalityIn bool
}

// FDE is a Frame Description Entry (DWARF 5 §6.4.1). Begin and End are
// link-time addresses: the FDE covers [Begin, End).
type FDE struct {
	Offset       uint64
	CIE          *CIE
	Begin, End   uint64
	LSDA         uint64
	Instructions []byte
	instrsOffset uint64
}

// FormatError is a malformed entry in a frame section: Format is the
// section (".eh_frame", ".debug_frame" or ".eh_frame_hdr"), Off the section
// offset. It is analysis's one FormatError type.
type FormatError = cursor.FormatError

// entryHeader is the part common to CIEs and FDEs: the length and the CIE
// id / pointer (DWARF 5 §6.4.1; DWARF 5 §7.4 for the 64-bit format).
type entryHeader struct {
	off     uint64 // section offset of the length field
	end     int    // offset just past the entry
	isCIE   bool
	cieOff  uint64 // for FDEs: the section offset of their CIE
	body    int    // offset just past the id field
	dwarf64 bool
	isTerm  bool // a zero length: the .eh_frame terminator
}

// readHeader reads the entry header at off.
func (t *Table) readHeader(off int) (entryHeader, error) {
	c := cursor.New(t.data, t.order, 0)
	c.Seek(off)
	h := entryHeader{off: uint64(off)}
	length := uint64(c.U32())
	if length == 0xffffffff {
		h.dwarf64 = true
		length = c.U64()
	}
	if err := c.Err(); err != nil {
		return h, t.errorf(uint64(off), "truncated entry length")
	}
	if length == 0 {
		h.isTerm = true
		h.end = c.Off
		return h, nil
	}
	if length > uint64(c.Len()) {
		return h, t.errorf(uint64(off), "entry length 0x%x beyond section end", length)
	}
	h.end = c.Off + int(length)
	idPos := c.Pos()
	var id uint64
	if t.kind == EHFrame || !h.dwarf64 {
		id = uint64(c.U32())
	} else {
		id = c.U64()
	}
	if c.Err() != nil || c.Off > h.end {
		return h, t.errorf(uint64(off), "entry too short for its id")
	}
	h.body = c.Off
	if t.kind == EHFrame {
		// LSB §10.6.1.2: the CIE pointer is the offset back from this field.
		h.isCIE = id == 0
		if !h.isCIE {
			if id > idPos {
				return h, t.errorf(uint64(off), "CIE pointer 0x%x points before the section", id)
			}
			h.cieOff = idPos - id
		}
	} else {
		h.isCIE = id == 0xffffffff || id == 0xffffffffffffffff
		h.cieOff = id
	}
	return h, nil
}

// cieAt returns the (cached) CIE at section offset off.
func (t *Table) cieAt(off uint64) (*CIE, error) {
	if cie, ok := t.cies[off]; ok {
		return cie, nil
	}
	if off >= uint64(len(t.data)) {
		return nil, t.errorf(off, "CIE offset beyond section end")
	}
	h, err := t.readHeader(int(off))
	if err != nil {
		return nil, err
	}
	if h.isTerm || !h.isCIE {
		return nil, t.errorf(off, "entry is not a CIE")
	}
	cie, err := t.parseCIE(h)
	if err != nil {
		return nil, err
	}
	if len(t.cies) >= maxCachedCIEs {
		clear(t.cies)
	}
	t.cies[off] = cie
	return cie, nil
}

// parseCIE decodes a CIE body (DWARF 5 §6.4.1, LSB §10.6.1.1).
func (t *Table) parseCIE(h entryHeader) (*CIE, error) {
	c := cursor.New(t.data[:h.end], t.order, 0)
	c.Seek(h.body)
	cie := &CIE{Offset: h.off, AddressSize: uint8(t.ptrSize), FDEEncoding: DW_EH_PE_absptr, LSDAEncoding: DW_EH_PE_omit}
	cie.Version = c.U8()
	switch cie.Version {
	case 1, 3, 4:
	default:
		if c.Err() == nil {
			return nil, t.errorf(h.off, "unsupported CIE version %d", cie.Version)
		}
	}
	cie.Augmentation = c.CString()
	aug := cie.Augmentation
	if strings.HasPrefix(aug, "eh") {
		c.Skip(t.ptrSize) // GCC 2.x: pointer to exception data
		aug = aug[2:]
	}
	if cie.Version >= 4 {
		cie.AddressSize = c.U8()
		cie.SegmentSize = c.U8()
		if c.Err() == nil && cie.AddressSize != 4 && cie.AddressSize != 8 {
			return nil, t.errorf(h.off, "unsupported CIE address size %d", cie.AddressSize)
		}
	}
	cie.CodeAlign = c.ULEB128()
	cie.DataAlign = c.SLEB128()
	if cie.Version == 1 {
		cie.RAColumn = uint64(c.U8())
	} else {
		cie.RAColumn = c.ULEB128()
	}
	if strings.HasPrefix(aug, "z") {
		cie.HasAugData = true
		n := c.ULEB128()
		if c.Err() == nil && n > uint64(c.Len()) {
			return nil, t.errorf(h.off, "augmentation data length %d beyond entry", n)
		}
		augEnd := c.Off + int(n)
		ac := cursor.New(t.data[:augEnd], t.order, 0)
		ac.Seek(c.Off)
	chars:
		for _, ch := range aug[1:] {
			switch ch {
			case 'L':
				cie.LSDAEncoding = ac.U8()
			case 'P':
				enc := ac.U8()
				cie.Personality, cie.personalityIn = readEncoded(ac, enc, t.ptrSize, t.bases(0))
			case 'R':
				cie.FDEEncoding = ac.U8()
			case 'S':
				cie.SignalFrame = true
			case 'B', 'G':
				// AArch64: pointer authentication with the B key; MTE tagged frames.
			default:
				break chars // unknown: the length lets us skip the rest
			}
		}
		if err := ac.Err(); err != nil {
			return nil, t.wrap(h.off, err)
		}
		c.Seek(augEnd)
	} else if aug != "" {
		return nil, t.errorf(h.off, "unknown augmentation %q", cie.Augmentation)
	}
	if err := c.Err(); err != nil {
		return nil, t.wrap(h.off, err)
	}
	cie.instrsOffset = uint64(c.Off)
	cie.Initial = t.data[c.Off:h.end]
	return cie, nil
}

// parseFDE decodes an FDE whose header is h (DWARF 5 §6.4.1, LSB §10.6.1.2).
func (t *Table) parseFDE(h entryHeader) (*FDE, error) {
	cie, err := t.cieAt(h.cieOff)
	if err != nil {
		return nil, err
	}
	c := cursor.New(t.data[:h.end], t.order, 0)
	c.Seek(h.body)
	fde := &FDE{Offset: h.off, CIE: cie}
	if t.kind == EHFrame {
		begin, ind := readEncoded(c, cie.FDEEncoding, t.ptrSize, t.bases(0))
		if ind && c.Err() == nil {
			if begin, err = t.deref(begin); err != nil {
				return nil, t.wrap(h.off, err)
			}
		}
		// The range has the encoding's format but no application (LSB §10.6.1.2).
		rng, _ := readEncoded(c, cie.FDEEncoding&0x0f, t.ptrSize, t.bases(0))
		fde.Begin, fde.End = begin, begin+rng
		if cie.HasAugData {
			n := c.ULEB128()
			if c.Err() == nil && n > uint64(c.Len()) {
				return nil, t.errorf(h.off, "augmentation data length %d beyond entry", n)
			}
			augEnd := c.Off + int(n)
			if cie.LSDAEncoding != DW_EH_PE_omit && n > 0 {
				ac := cursor.New(t.data[:augEnd], t.order, 0)
				ac.Seek(c.Off)
				fde.LSDA, _ = readEncoded(ac, cie.LSDAEncoding, t.ptrSize, t.bases(begin))
			}
			c.Seek(augEnd)
		}
	} else {
		c.Skip(int(cie.SegmentSize))
		size := int(cie.AddressSize)
		fde.Begin = c.Uint(size)
		fde.End = fde.Begin + c.Uint(size)
	}
	if err := c.Err(); err != nil {
		return nil, t.wrap(h.off, err)
	}
	if fde.End < fde.Begin {
		return nil, t.errorf(h.off, "FDE range wraps around")
	}
	fde.instrsOffset = uint64(c.Off)
	fde.Instructions = t.data[c.Off:h.end]
	return fde, nil
}

// fdeAt returns the (cached) FDE at section offset off.
func (t *Table) fdeAt(off uint64) (*FDE, error) {
	if fde, ok := t.fdes[off]; ok {
		return fde, nil
	}
	if off >= uint64(len(t.data)) {
		return nil, t.errorf(off, "FDE offset beyond section end")
	}
	h, err := t.readHeader(int(off))
	if err != nil {
		return nil, err
	}
	if h.isTerm || h.isCIE {
		return nil, t.errorf(off, "entry is not an FDE")
	}
	fde, err := t.parseFDE(h)
	if err != nil {
		return nil, err
	}
	if len(t.fdes) >= maxCachedFDEs {
		clear(t.fdes)
	}
	t.fdes[off] = fde
	return fde, nil
}

func (t *Table) errorf(off uint64, format string, args ...any) error {
	return &FormatError{Format: t.kind.String(), Off: int64(off), Msg: fmt.Sprintf(format, args...)}
}

// wrap turns a cursor error into a FormatError; off is the entry's offset,
// used when err carries no better one.
func (t *Table) wrap(off uint64, err error) error {
	if ce, ok := err.(*FormatError); ok {
		return &FormatError{Format: t.kind.String(), Off: ce.Off, Msg: ce.Msg}
	}
	return &FormatError{Format: t.kind.String(), Off: int64(off), Msg: err.Error(), Err: err}
}
