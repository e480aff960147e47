package cuda

import (
	"fmt"
)

// DWARF line-number program opcodes (DWARF 2 §6.2.5, DWARF 4 §6.2.5.2-3)
// and NVIDIA's vendor extensions, as elfutils (libdw/dwarf_getsrclines.c,
// DW_LNE_NVIDIA_*) and cuda-gdb (gdb/dwarf2/read.c) decode them.
const (
	lnsCopy             = 1
	lnsAdvancePC        = 2
	lnsAdvanceLine      = 3
	lnsSetFile          = 4
	lnsSetColumn        = 5
	lnsNegateStmt       = 6
	lnsSetBasicBlock    = 7
	lnsConstAddPC       = 8
	lnsFixedAdvancePC   = 9
	lnsSetPrologueEnd   = 10
	lnsSetEpilogueBegin = 11
	lnsSetISA           = 12

	lneEndSequence   = 1
	lneSetAddress    = 2
	lneDefineFile    = 3
	lneDiscriminator = 4
	// lneNVIDIAInlinedCall is DW_LNE_NVIDIA_inlined_call: ULEB128 context
	// (the 1-based row, within the current sequence, of the call site; 0
	// for code of the outermost function) and ULEB128 offset of the inlined
	// function's linkage name in .debug_str, relative to the header's base.
	lneNVIDIAInlinedCall = 0x90
	// lneNVIDIASetFunctionName is DW_LNE_NVIDIA_set_function_name: ULEB128
	// .debug_str offset of the current function's name.
	lneNVIDIASetFunctionName = 0x91
)

// Caps on what one line program may make us allocate.
const (
	maxLineRows  = 1 << 24
	maxLineFiles = 1 << 16
)

// lineTable is one line-number program (one compilation unit) decoded
// into sequences of rows.
type lineTable struct {
	offset    uint64 // of the unit in .debug_line
	version   uint16
	dirs      []string
	files     []string // full paths, index 0 unused (DWARF 2-4 files are 1-based)
	strBase   uint64   // NVIDIA: .debug_str base for function names
	sequences []lineSequence
}

// lineSequence is the rows from one DW_LNE_set_address to its
// DW_LNE_end_sequence. Rows keep program order: the context of an inlined
// row is an index into rows.
type lineSequence struct {
	// addrOffset is where the DW_LNE_set_address operand sits in
	// .debug_line: relocations against it say which section the sequence
	// describes in non-relocated cubins.
	addrOffset uint64
	start, end uint64 // addresses as written (before relocation)
	rows       []lineRow
}

// lineRow is one row of the line-number matrix with NVIDIA's inline columns.
type lineRow struct {
	addr    uint64
	file    uint32
	line    uint32
	column  uint32
	context uint32 // 1-based call-site row in the sequence, 0 = outermost
	name    uint64 // .debug_str offset of the function, relative to the table's strBase, when nameSet
	nameSet bool
	isStmt  bool
}

// byteReader is a bounds-checked little-endian cursor.
type byteReader struct {
	b   []byte
	off int
	err error
}

func (r *byteReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
	r.off = len(r.b)
}

func (r *byteReader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || len(r.b)-r.off < n {
		r.fail("truncated at offset %#x (need %d bytes)", r.off, n)
		return false
	}
	return true
}

func (r *byteReader) u8() uint8 {
	if !r.need(1) {
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *byteReader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	r.off += 2
	return le.Uint16(r.b[r.off-2:])
}

func (r *byteReader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	r.off += 4
	return le.Uint32(r.b[r.off-4:])
}

func (r *byteReader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	r.off += 8
	return le.Uint64(r.b[r.off-8:])
}

func (r *byteReader) uleb() uint64 {
	var v uint64
	var shift uint
	for {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *byteReader) sleb() int64 {
	var v int64
	var shift uint
	for {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

func (r *byteReader) cstring() string {
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
	r.fail("unterminated string at offset %#x", r.off)
	return ""
}

// parseLineTables decodes every line-number program in a .debug_line
// section. A damaged unit ends the walk; the units before it are kept and
// the error says what was wrong.
func parseLineTables(sec []byte) ([]*lineTable, error) {
	var tables []*lineTable
	for off := uint64(0); off < uint64(len(sec)); {
		t, next, err := parseLineTable(sec, off)
		if err != nil {
			return tables, formatErr(".debug_line unit", off, "%v", err)
		}
		tables = append(tables, t)
		off = next
	}
	return tables, nil
}

// parseLineTable decodes the unit at off and returns the offset of the next.
func parseLineTable(sec []byte, off uint64) (*lineTable, uint64, error) {
	r := &byteReader{b: sec, off: int(off)}
	unitLen := uint64(r.u32())
	offSize := 4
	if unitLen == 0xffffffff { // 64-bit DWARF (DWARF 3 §7.4)
		unitLen = r.u64()
		offSize = 8
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	if unitLen > uint64(len(sec)-r.off) {
		return nil, 0, fmt.Errorf("unit length %d runs past the section (%d bytes left)", unitLen, len(sec)-r.off)
	}
	end := r.off + int(unitLen)
	r.b = sec[:end] // nothing in this unit may read past its end
	t := &lineTable{offset: off}
	t.version = r.u16()
	if r.err == nil && (t.version < 2 || t.version > 4) {
		return nil, 0, fmt.Errorf("line table version %d not supported (cubins use 2)", t.version)
	}
	var headerLen uint64
	if offSize == 8 {
		headerLen = r.u64()
	} else {
		headerLen = uint64(r.u32())
	}
	if headerLen > uint64(end-r.off) {
		return nil, 0, fmt.Errorf("header length %d runs past the unit", headerLen)
	}
	progStart := r.off + int(headerLen)
	minInst := uint64(r.u8())
	if t.version >= 4 {
		r.u8() // maximum_operations_per_instruction: VLIW only, 1 on GPUs
	}
	defaultIsStmt := r.u8() != 0
	lineBase := int64(int8(r.u8()))
	lineRange := uint64(r.u8())
	opcodeBase := r.u8()
	if r.err == nil && lineRange == 0 {
		return nil, 0, fmt.Errorf("line_range is 0")
	}
	stdLens := make([]uint8, 0, 16)
	for i := 1; i < int(opcodeBase) && r.err == nil; i++ {
		stdLens = append(stdLens, r.u8())
	}
	hdr := &byteReader{b: sec[:progStart], off: r.off}
	if r.off > progStart {
		return nil, 0, fmt.Errorf("header fields run past header_length")
	}
	for hdr.err == nil {
		d := hdr.cstring()
		if d == "" {
			break
		}
		if len(t.dirs) >= maxLineFiles {
			return nil, 0, fmt.Errorf("more than %d include directories", maxLineFiles)
		}
		t.dirs = append(t.dirs, d)
	}
	t.files = []string{""}
	for hdr.err == nil {
		name := hdr.cstring()
		if name == "" {
			break
		}
		dir := hdr.uleb()
		hdr.uleb() // modification time
		hdr.uleb() // length
		if len(t.files) >= maxLineFiles {
			return nil, 0, fmt.Errorf("more than %d file entries", maxLineFiles)
		}
		t.files = append(t.files, t.joinDir(dir, name))
	}
	if hdr.err != nil {
		return nil, 0, fmt.Errorf("header: %v", hdr.err)
	}
	// NVIDIA: a 4-byte .debug_str base for the function names of this
	// unit follows the file table (elfutils reads it when exactly 4 header
	// bytes are left). nvlink sets it per unit when it merges .debug_str.
	if progStart-hdr.off == 4 {
		t.strBase = uint64(hdr.u32())
	}
	r.off = progStart
	if err := t.run(r, minInst, defaultIsStmt, lineBase, lineRange, opcodeBase, stdLens); err != nil {
		return t, 0, err
	}
	return t, uint64(end), nil
}

func (t *lineTable) joinDir(dir uint64, name string) string {
	if len(name) > 0 && name[0] == '/' || dir == 0 || dir > uint64(len(t.dirs)) {
		return name
	}
	d := t.dirs[dir-1]
	if len(d) > 0 && d[len(d)-1] == '/' {
		return d + name
	}
	return d + "/" + name
}

// fileName returns the path of file index i (1-based), or "".
func (t *lineTable) fileName(i uint32) string {
	if int(i) < len(t.files) {
		return t.files[i]
	}
	return ""
}

// run executes the line-number program (DWARF 2 §6.2.5).
func (t *lineTable) run(r *byteReader, minInst uint64, defaultIsStmt bool, lineBase int64, lineRange uint64,
	opcodeBase uint8, stdLens []uint8) error {
	type state struct {
		addr    uint64
		file    uint32
		line    int64
		column  uint32
		isStmt  bool
		context uint32
		name    uint64
		nameSet bool
	}
	reset := func() state { return state{file: 1, line: 1, isStmt: defaultIsStmt} }
	st := reset()
	var seq *lineSequence
	rows := 0
	emit := func() error {
		if seq == nil {
			// Rows before any DW_LNE_set_address: address 0 of an
			// unknown section.
			t.sequences = append(t.sequences, lineSequence{addrOffset: ^uint64(0), start: st.addr})
			seq = &t.sequences[len(t.sequences)-1]
		}
		if rows++; rows > maxLineRows {
			return fmt.Errorf("more than %d rows", maxLineRows)
		}
		line := st.line
		if line < 0 || line > 1<<31 {
			line = 0
		}
		row := lineRow{addr: st.addr, file: st.file, line: uint32(line), column: st.column,
			context: st.context, name: st.name, nameSet: st.nameSet, isStmt: st.isStmt}
		// A row identical to the one before it is not a new row for the
		// NVIDIA context numbering: ptxas 11.8 (sm_90) writes such
		// duplicates at a function's entry and numbers the call-site rows
		// after them as if they were one (see dedupRows in the tests).
		if n := len(seq.rows); n > 0 && seq.rows[n-1] == row {
			return nil
		}
		seq.rows = append(seq.rows, row)
		return nil
	}
	for r.off < len(r.b) && r.err == nil {
		op := r.u8()
		switch {
		case op >= opcodeBase:
			adj := uint64(op - opcodeBase)
			st.addr += adj / lineRange * minInst
			st.line += lineBase + int64(adj%lineRange)
			if err := emit(); err != nil {
				return err
			}
		case op == 0:
			n := r.uleb()
			if n == 0 || n > uint64(len(r.b)-r.off) {
				r.fail("extended opcode length %d at %#x", n, r.off)
				break
			}
			next := r.off + int(n)
			sub := r.u8()
			switch sub {
			case lneEndSequence:
				if err := emit(); err != nil {
					return err
				}
				seq.end = st.addr
				seq.rows = seq.rows[:len(seq.rows)-1] // the end row is not code
				seq = nil
				st = reset()
			case lneSetAddress:
				at := uint64(r.off)
				var a uint64
				switch n - 1 {
				case 8:
					a = r.u64()
				case 4:
					a = uint64(r.u32())
				default:
					r.fail("DW_LNE_set_address with %d-byte operand", n-1)
				}
				st.addr = a
				if seq == nil {
					t.sequences = append(t.sequences, lineSequence{addrOffset: at, start: a})
					seq = &t.sequences[len(t.sequences)-1]
				}
			case lneDefineFile:
				name := r.cstring()
				dir := r.uleb()
				if len(t.files) < maxLineFiles {
					t.files = append(t.files, t.joinDir(dir, name))
				}
			case lneNVIDIAInlinedCall:
				st.context = uint32(min(r.uleb(), 1<<31))
				st.name = r.uleb()
				st.nameSet = true
			case lneNVIDIASetFunctionName:
				st.name = r.uleb()
				st.nameSet = true
			}
			// Skip what we did not read (discriminators, unknown vendor ops).
			if r.err == nil {
				if r.off > next {
					r.fail("extended opcode %#x overran its length", sub)
				}
				r.off = next
			}
		case op == lnsCopy:
			if err := emit(); err != nil {
				return err
			}
		case op == lnsAdvancePC:
			st.addr += r.uleb() * minInst
		case op == lnsAdvanceLine:
			st.line += r.sleb()
		case op == lnsSetFile:
			st.file = uint32(min(r.uleb(), 1<<31))
		case op == lnsSetColumn:
			st.column = uint32(min(r.uleb(), 1<<31))
		case op == lnsNegateStmt:
			st.isStmt = !st.isStmt
		case op == lnsSetBasicBlock, op == lnsSetPrologueEnd, op == lnsSetEpilogueBegin:
		case op == lnsConstAddPC:
			st.addr += uint64(255-opcodeBase) / lineRange * minInst
		case op == lnsFixedAdvancePC:
			st.addr += uint64(r.u16())
		default:
			// A standard opcode this reader does not know (or lnsSetISA):
			// skip its ULEB128 operands as the header says.
			if int(op-1) < len(stdLens) {
				for i := 0; i < int(stdLens[op-1]); i++ {
					r.uleb()
				}
			}
		}
	}
	if r.err != nil {
		return r.err
	}
	if seq != nil && len(seq.rows) > 0 {
		// No DW_LNE_end_sequence: the last row ends the sequence.
		seq.end = seq.rows[len(seq.rows)-1].addr
	}
	return nil
}
