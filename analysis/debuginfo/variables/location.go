package variables

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
	"github.com/faultline-dev/faultline/analysis/unwind/op"
)

// Location descriptions of variables (DWARF 5 §2.6): single location
// expressions, location lists (.debug_loclists, §2.6.2 and §7.29, and
// DWARF 2-4's .debug_loc), and their evaluation against a frame with the
// expression evaluator of package op.

// DWARF expression opcodes op does not evaluate itself (DWARF 5 §7.7.1,
// Table 7.9; GNU extensions from gcc's include/dwarf2.def).
const (
	opAddr           = 0x03
	opFbreg          = 0x91
	opPiece          = 0x93
	opFormTLSAddress = 0x9b
	opCallFrameCFA   = 0x9c
	opBitPiece       = 0x9d
	opImplicitValue  = 0x9e
	opStackValue     = 0x9f
	opImplicitPtr    = 0xa0
	opAddrx          = 0xa1
	opConstx         = 0xa2
	opEntryValue     = 0xa3
	opGNUPushTLS     = 0xe0
	opGNUUninit      = 0xf0
	opGNUImplicitPtr = 0xf2
	opGNUEntryValue  = 0xf3
	opGNUParamRef    = 0xfa
	opGNUAddrIndex   = 0xfb
	opGNUConstIndex  = 0xfc
	opConst8u        = 0x0e
	opConsts         = 0x11
	opPlus           = 0x22
)

// DW_LLE_* location list entry kinds (DWARF 5 §7.29, Table 7.30).
const (
	lleEndOfList       = 0x00
	lleBaseAddressx    = 0x01
	lleStartxEndx      = 0x02
	lleStartxLength    = 0x03
	lleOffsetPair      = 0x04
	lleDefaultLocation = 0x05
	lleBaseAddress     = 0x06
	lleStartEnd        = 0x07
	lleStartLength     = 0x08
)

// maxLocEntries bounds the entries of one location list.
const maxLocEntries = 1 << 16

// errNoLocation says a location list has no entry for the pc: the variable
// is optimized out there (DWARF 5 §2.6.2).
var errNoLocation = errors.New("no location at pc")

// locListCtx is what a unit's location lists are read with.
type locListCtx struct {
	vers     int
	asize    int
	base     uint64 // the unit's base address (DW_AT_low_pc)
	addrBase uint64
	bo       binary.ByteOrder
	addr     []byte // .debug_addr
	// gnuSplit: the list is in a DWARF 4 .debug_loc.dwo (GNU DebugFission).
	gnuSplit bool
}

// findLocation returns the expression that location list entries at off
// give for the link-time pc: .debug_loclists entries (DWARF 5) in sec
// when vers >= 5, else .debug_loc's address pairs. It returns
// errNoLocation when no entry covers pc.
func findLocation(sec []byte, off uint64, pc uint64, c *locListCtx) ([]byte, error) {
	if off > uint64(len(sec)) {
		return nil, fmt.Errorf("location list offset 0x%x past the section", off)
	}
	if c.asize != 4 && c.asize != 8 {
		return nil, fmt.Errorf("unsupported address size %d", c.asize)
	}
	r := &dwarfreader.DieReader{B: sec, Pos: int(off), End: len(sec), Bo: c.bo}
	switch {
	case c.vers < 5 && c.gnuSplit:
		return findGNUSplitLoc(r, pc, c)
	case c.vers < 5:
		return findDebugLoc(r, pc, c)
	}
	return findLocList(r, pc, c)
}

// findLocList reads a DWARF 5 .debug_loclists list (§2.6.2): the
// expression of the first bounded entry covering pc, else of its default
// entry.
func findLocList(r *dwarfreader.DieReader, pc uint64, c *locListCtx) ([]byte, error) {
	base := c.base
	var dflt []byte
	for n := 0; n < maxLocEntries; n++ {
		kind := r.U8()
		if r.Bad {
			return nil, errors.New("truncated location list")
		}
		switch kind {
		case lleEndOfList:
			if dflt != nil {
				return dflt, nil
			}
			return nil, errNoLocation
		case lleBaseAddressx:
			a, ok := c.addrx(r.Uleb())
			if !ok || r.Bad {
				return nil, errors.New("bad DW_LLE_base_addressx index")
			}
			base = a
			continue
		case lleBaseAddress:
			base = r.Uint(c.asize)
			continue
		}
		lo, hi, bounded, err := c.entryRange(r, kind, base)
		if err != nil {
			return nil, err
		}
		n := r.Uleb()
		if r.Bad || n > uint64(r.End-r.Pos) {
			return nil, errors.New("truncated location list entry")
		}
		expr := r.B[r.Pos : r.Pos+int(n)]
		r.Pos += int(n)
		if !bounded {
			dflt = expr
			continue
		}
		if lo <= pc && pc < hi {
			return expr, nil
		}
	}
	return nil, errors.New("location list too long")
}

// entryRange reads the addresses of a location list entry of the given
// kind (not a base address entry); bounded is false for the default entry.
func (c *locListCtx) entryRange(r *dwarfreader.DieReader, kind uint8, base uint64) (lo, hi uint64, bounded bool, err error) {
	switch kind {
	case lleStartxEndx, lleStartxLength:
		a, ok := c.addrx(r.Uleb())
		if !ok {
			return 0, 0, false, errors.New("bad DW_LLE_startx index")
		}
		lo = a
		if kind == lleStartxEndx {
			b, ok := c.addrx(r.Uleb())
			if !ok {
				return 0, 0, false, errors.New("bad DW_LLE_endx index")
			}
			hi = b
		} else {
			hi = lo + r.Uleb()
		}
	case lleOffsetPair:
		lo = base + r.Uleb()
		hi = base + r.Uleb()
	case lleDefaultLocation:
		return 0, 0, false, nil
	case lleStartEnd:
		lo = r.Uint(c.asize)
		hi = r.Uint(c.asize)
	case lleStartLength:
		lo = r.Uint(c.asize)
		hi = lo + r.Uleb()
	default:
		return 0, 0, false, fmt.Errorf("unknown location list entry kind 0x%x", kind)
	}
	return lo, hi, true, nil
}

// addrx is entry idx of the unit's .debug_addr table.
func (c *locListCtx) addrx(idx uint64) (uint64, bool) {
	if idx > uint64(len(c.addr)) {
		return 0, false
	}
	return dwarfreader.ReadAt(c.addr, c.addrBase+idx*uint64(c.asize), c.asize, c.bo)
}

// findDebugLoc reads a DWARF 2-4 .debug_loc list (§2.6.2 of DWARF 4):
// address pairs relative to the base, each with a 2-byte expression
// length; a pair whose first address is the largest selects a new base;
// two zeros end it.
func findDebugLoc(r *dwarfreader.DieReader, pc uint64, c *locListCtx) ([]byte, error) {
	base := c.base
	maxAddr := ^uint64(0) >> uint((8-c.asize)*8)
	for n := 0; n < maxLocEntries; n++ {
		lo := r.Uint(c.asize)
		hi := r.Uint(c.asize)
		if r.Bad {
			return nil, errors.New("truncated location list")
		}
		if lo == 0 && hi == 0 {
			return nil, errNoLocation
		}
		if lo == maxAddr {
			base = hi
			continue
		}
		size := r.Uint(2)
		if r.Bad || size > uint64(r.End-r.Pos) {
			return nil, errors.New("truncated location list entry")
		}
		expr := r.B[r.Pos : r.Pos+int(size)]
		r.Pos += int(size)
		if base+lo <= pc && pc < base+hi {
			return expr, nil
		}
	}
	return nil, errors.New("location list too long")
}

// GNU DebugFission's location list entry kinds in .debug_loc.dwo (gdb's
// include/dwarf2.h; the DWARF 5 DW_LLE_* kinds grew out of them).
const (
	lleGNUEndOfList             = 0x00
	lleGNUBaseAddressSelect     = 0x01 // an address index: the new base
	lleGNUStartEnd              = 0x02 // two address indexes
	lleGNUStartLength           = 0x03 // an address index and a 4-byte length
	lleGNUViewPair              = 0x09 // two location view numbers (gcc), no location
	gnuSplitLocLengthSize   int = 2    // an expression's length, as in .debug_loc
)

// findGNUSplitLoc reads a DWARF 4 split unit's .debug_loc.dwo list (GNU
// DebugFission, as gdb's decode_debug_loc_dwo_addresses): entries whose
// addresses are indexes into .debug_addr from the skeleton's
// DW_AT_GNU_addr_base, already absolute (no base is added), each with a
// 2-byte expression length.
func findGNUSplitLoc(r *dwarfreader.DieReader, pc uint64, c *locListCtx) ([]byte, error) {
	for n := 0; n < maxLocEntries; n++ {
		kind := r.U8()
		var lo, hi uint64
		var ok bool
		switch kind {
		case lleGNUEndOfList:
			if r.Bad {
				return nil, errors.New("truncated location list")
			}
			return nil, errNoLocation
		case lleGNUBaseAddressSelect, lleGNUViewPair:
			r.Uleb()
			if kind == lleGNUViewPair {
				r.Uleb()
			}
			continue
		case lleGNUStartEnd:
			lo, ok = c.addrx(r.Uleb())
			hi, _ = c.addrx(r.Uleb())
		case lleGNUStartLength:
			lo, ok = c.addrx(r.Uleb())
			hi = lo + r.Uint(4)
		default:
			return nil, fmt.Errorf("unknown .debug_loc.dwo entry kind 0x%x", kind)
		}
		size := r.Uint(gnuSplitLocLengthSize)
		if r.Bad || !ok || size > uint64(r.End-r.Pos) {
			return nil, errors.New("truncated or bad .debug_loc.dwo entry")
		}
		expr := r.B[r.Pos : r.Pos+int(size)]
		r.Pos += int(size)
		if lo <= pc && pc < hi {
			return expr, nil
		}
	}
	return nil, errors.New("location list too long")
}

// FrameState is what location expressions of one frame read: its
// registers, by DWARF number (false for registers the unwinder did not
// recover), its canonical frame address, and process memory.
type FrameState interface {
	Reg(n uint64) (uint64, bool)
	CFA() (uint64, bool)
	ReadMemory(addr uint64, b []byte) (int, error)
}

// locKind is what a location expression gave.
type locKind uint8

const (
	locMemory    locKind = iota // the value is in memory at addr
	locRegister                 // the value is in a register: val holds it
	locImplicit                 // the value itself (DW_OP_stack_value, DW_OP_implicit_value, pieces): bytes
	locOptimized                // no location: optimized out
	locSynthetic                // DW_OP_implicit_pointer: a pointer that does not exist
)

// location is an evaluated location description.
type location struct {
	kind  locKind
	addr  uint64
	val   uint64
	bytes []byte
	// entry says the expression needed a DW_OP_entry_value that could not
	// be resolved (the reason a value is optimized out).
	entry bool
}

// exprEnv is what an expression is evaluated with beyond the frame.
type exprEnv struct {
	frame     FrameState
	bo        binary.ByteOrder
	asize     int
	offSize   int
	bias      uint64 // runtime - link-time address, for DW_OP_addr
	frameBase func() (uint64, error)
	addrx     func(idx uint64) (uint64, bool)
}

// opLen returns the length of the operation at expr[i:] with its operands,
// or -1 when it is malformed or unknown.
func (e *exprEnv) opLen(expr []byte, i int) int {
	r := &dwarfreader.DieReader{B: expr, Pos: i + 1, End: len(expr), Bo: e.bo}
	code := expr[i]
	switch {
	case code >= 0x30 && code <= 0x6f: // lit, reg
	case code >= 0x70 && code <= 0x8f: // breg
		r.Sleb()
	default:
		switch code {
		case opAddr:
			r.Skip(e.asize)
		case 0x06, 0x12, 0x13, 0x14, 0x16, 0x17, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22,
			0x24, 0x25, 0x26, 0x27, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x96, 0x97, opFormTLSAddress,
			opCallFrameCFA, opStackValue, opGNUPushTLS, opGNUUninit:
		case 0x08, 0x09, 0x15, 0x94, 0x95:
			r.Skip(1)
		case 0x0a, 0x0b, 0x28, 0x2f, 0x98:
			r.Skip(2)
		case 0x0c, 0x0d, 0x99, opGNUParamRef:
			r.Skip(4)
		case 0x0e, 0x0f:
			r.Skip(8)
		case 0x10, 0x23, 0x90, opPiece, opAddrx, opConstx, 0xa8, 0xa9, 0xf7, 0xf9, opGNUAddrIndex, opGNUConstIndex:
			r.Uleb()
		case 0x11, opFbreg:
			r.Sleb()
		case 0x92:
			r.Uleb()
			r.Sleb()
		case opBitPiece, 0xa5, 0xf5:
			r.Uleb()
			r.Uleb()
		case opImplicitValue, opEntryValue, opGNUEntryValue:
			r.Skip(int(min(r.Uleb(), 1<<20)))
		case 0x9a, 0xfd:
			r.Skip(e.offSize)
		case opImplicitPtr, opGNUImplicitPtr:
			r.Skip(e.offSize)
			r.Sleb()
		case 0xa4, 0xf4: // const_type: type, size, bytes
			r.Uleb()
			r.Skip(int(r.U8()))
		case 0xa6, 0xa7, 0xf6:
			r.Skip(1)
			r.Uleb()
		default:
			return -1
		}
	}
	if r.Bad {
		return -1
	}
	return r.Pos - i
}

// eval evaluates a location expression. Pieces (DW_OP_piece, §2.6.1.2)
// are assembled into one value of up to 8 bytes.
func (e *exprEnv) eval(expr []byte) (location, error) {
	if len(expr) == 0 {
		return location{kind: locOptimized}, nil // §2.6.1.1.1: an empty location
	}
	// Split at pieces.
	type piece struct {
		Expr []byte
		Size uint64
	}
	var pieces []piece
	start := 0
	for i := 0; i < len(expr); {
		n := e.opLen(expr, i)
		if n < 0 {
			return location{}, fmt.Errorf("unsupported DWARF operation 0x%02x", expr[i])
		}
		switch expr[i] {
		case opPiece:
			r := &dwarfreader.DieReader{B: expr, Pos: i + 1, End: len(expr)}
			pieces = append(pieces, piece{expr[start:i], r.Uleb()})
			start = i + n
		case opBitPiece:
			return location{}, errors.New("DW_OP_bit_piece is not supported")
		}
		i += n
	}
	if pieces == nil {
		return e.evalSimple(expr)
	}
	if start != len(expr) {
		return location{}, errors.New("operations after the last DW_OP_piece")
	}
	var out []byte
	for _, p := range pieces {
		if p.Size > 8 || uint64(len(out))+p.Size > 8 {
			return location{kind: locImplicit, bytes: nil}, errManyPieces
		}
		l, err := e.evalSimple(p.Expr)
		if err != nil {
			return location{}, err
		}
		b := make([]byte, 8)
		switch l.kind {
		case locOptimized, locSynthetic:
			return location{kind: locOptimized, entry: l.entry}, nil
		case locMemory:
			n, err := e.frame.ReadMemory(l.addr, b[:p.Size])
			if err != nil || uint64(n) < p.Size {
				//lint:ignore ST1005 gdb's own words, which users search for
				return location{}, fmt.Errorf("Cannot access memory at address 0x%x", l.addr)
			}
		case locRegister:
			e.bo.PutUint64(b, l.val)
			if e.bo == binary.BigEndian {
				b = b[8-p.Size:]
			}
		case locImplicit:
			copy(b, l.bytes)
		}
		out = append(out, b[:p.Size]...)
	}
	return location{kind: locImplicit, bytes: out}, nil
}

// errManyPieces marks a value assembled from pieces larger than 8 bytes.
var errManyPieces = errors.New("<pieces>")

// evalSimple evaluates an expression without pieces: DW_OP_implicit_value
// alone, a trailing DW_OP_stack_value, register locations, and memory
// locations. Operations op does not know are rewritten to constants:
// DW_OP_fbreg (frame base + offset), DW_OP_call_frame_cfa, DW_OP_addr and
// DW_OP_addrx (relocated by the load bias).
func (e *exprEnv) evalSimple(expr []byte) (location, error) {
	if len(expr) == 0 {
		return location{kind: locOptimized}, nil
	}
	switch expr[0] {
	case opImplicitValue:
		r := &dwarfreader.DieReader{B: expr, Pos: 1, End: len(expr)}
		n := r.Uleb()
		if r.Bad || n > uint64(r.End-r.Pos) {
			return location{}, errors.New("truncated DW_OP_implicit_value")
		}
		return location{kind: locImplicit, bytes: expr[r.Pos : r.Pos+int(n)]}, nil
	case opImplicitPtr, opGNUImplicitPtr:
		return location{kind: locSynthetic}, nil
	}
	stackValue := false
	var rw []byte
	for i := 0; i < len(expr); {
		n := e.opLen(expr, i)
		if n < 0 {
			return location{}, fmt.Errorf("unsupported DWARF operation 0x%02x", expr[i])
		}
		if expr[i] == opStackValue {
			if i+n != len(expr) {
				return location{}, errors.New("DW_OP_stack_value before the end of the expression")
			}
			stackValue = true
		} else {
			var loc location
			var done bool
			var err error
			if rw, loc, done, err = e.rewriteOp(rw, expr[i:i+n]); err != nil || done {
				return loc, err
			}
		}
		i += n
	}
	if len(rw) == 0 {
		return location{kind: locOptimized}, nil
	}
	return e.evalRewritten(rw, stackValue)
}

// rewriteOp appends operation o (its opcode and operands) to rw, rewritten
// to constants where op cannot evaluate it. done is true when the
// operation decides the location without evaluating (an entry value, a
// frame without CFA).
func (e *exprEnv) rewriteOp(rw, o []byte) (_ []byte, loc location, done bool, err error) {
	switch code := o[0]; code {
	case opEntryValue, opGNUEntryValue, opGNUParamRef:
		// The value a register (§2.5.1.7), or with gcc's
		// DW_OP_GNU_parameter_ref a parameter of the function, had on
		// entry: gdb takes it from the caller's call site parameters, and
		// prints <optimized out> where they do not give it. Not resolved
		// here yet: <optimized out>, never an error.
		return rw, location{kind: locOptimized, entry: true}, true, nil
	case opGNUUninit:
	case opFbreg:
		r := &dwarfreader.DieReader{B: o, Pos: 1, End: len(o)}
		off := r.Sleb()
		fb, err := e.frameBase()
		if err != nil {
			return rw, location{}, true, err
		}
		rw = appendConst(rw, fb+uint64(off), e.bo)
	case opCallFrameCFA:
		cfa, ok := e.frame.CFA()
		if !ok {
			return rw, location{kind: locOptimized}, true, nil
		}
		rw = appendConst(rw, cfa, e.bo)
	case opAddr:
		r := &dwarfreader.DieReader{B: o, Pos: 1, End: len(o), Bo: e.bo}
		rw = appendConst(rw, r.Uint(e.asize)+e.bias, e.bo)
	case opAddrx, opConstx, opGNUAddrIndex, opGNUConstIndex:
		r := &dwarfreader.DieReader{B: o, Pos: 1, End: len(o)}
		a, ok := e.addrx(r.Uleb())
		if !ok {
			return rw, location{}, true, errors.New("bad .debug_addr index")
		}
		if code == opAddrx || code == opGNUAddrIndex {
			a += e.bias
		}
		rw = appendConst(rw, a, e.bo)
	case opFormTLSAddress, opGNUPushTLS:
		return rw, location{}, true, errors.New("thread-local storage is not supported")
	default:
		rw = append(rw, o...)
	}
	return rw, location{}, false, nil
}

// evalRewritten evaluates a rewritten expression with op: a register, a
// value (after DW_OP_stack_value) or a memory location.
func (e *exprEnv) evalRewritten(rw []byte, stackValue bool) (location, error) {
	v, isReg, err := op.Eval(rw, e.bo, e.asize, opContext{e.frame, e.bo})
	if err != nil {
		var oe *op.Error
		if errors.As(err, &oe) && oe.Err == nil && isRegisterUnknown(oe) {
			// A register the unwinder did not recover: gdb's <not saved>,
			// shown as <optimized out> (never guessed).
			return location{kind: locOptimized}, nil
		}
		if errors.As(err, &oe) && oe.Err != nil {
			return location{}, oe.Err
		}
		return location{}, err
	}
	switch {
	case isReg:
		return location{kind: locRegister, val: v}, nil
	case stackValue:
		b := make([]byte, 8)
		e.bo.PutUint64(b, v)
		if e.bo == binary.BigEndian {
			b = b[8-e.asize:]
		}
		return location{kind: locImplicit, bytes: b[:e.asize]}, nil
	}
	return location{kind: locMemory, addr: v}, nil
}

func isRegisterUnknown(e *op.Error) bool {
	return len(e.Msg) > 9 && e.Msg[:9] == "register " && e.Msg[len(e.Msg)-8:] == " unknown"
}

// appendConst appends DW_OP_const8u v.
func appendConst(dst []byte, v uint64, bo binary.ByteOrder) []byte {
	dst = append(dst, opConst8u)
	return append(dst, uint64Bytes(v, bo)...)
}

// opContext adapts a FrameState to op.Context.
type opContext struct {
	f  FrameState
	bo binary.ByteOrder
}

func (c opContext) Reg(n uint64) (uint64, bool) { return c.f.Reg(n) }

func (c opContext) ReadMemory(addr uint64, size int) (uint64, error) {
	var b [8]byte
	if size < 1 || size > 8 {
		return 0, fmt.Errorf("bad read size %d", size)
	}
	if n, _ := c.f.ReadMemory(addr, b[:size]); n < size {
		//lint:ignore ST1005 gdb's own words, which users search for
		return 0, fmt.Errorf("Cannot access memory at address 0x%x", addr)
	}
	return decodeUint(b[:size], c.bo), nil
}

// decodeUint reads a 1 to 8 byte unsigned integer.
func decodeUint(b []byte, bo binary.ByteOrder) uint64 {
	var v uint64
	for i := range b {
		if bo == binary.ByteOrder(binary.BigEndian) {
			v = v<<8 | uint64(b[i])
		} else {
			v |= uint64(b[i]) << (8 * i)
		}
	}
	return v
}

// uint64Bytes is v as 8 bytes in byte order bo.
func uint64Bytes(v uint64, bo binary.ByteOrder) []byte {
	b := make([]byte, 8)
	bo.PutUint64(b, v)
	return b
}
