package cuda

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
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
	r := cursor.New(sec, le, 0)
	r.Seek(int(min(off, uint64(len(sec)))))
	unitLen := uint64(r.U32())
	offSize := 4
	if unitLen == 0xffffffff { // 64-bit DWARF (DWARF 3 §7.4)
		unitLen = r.U64()
		offSize = 8
	}
	if r.Err() != nil {
		return nil, 0, r.Err()
	}
	if unitLen > uint64(len(sec)-r.Off) {
		return nil, 0, fmt.Errorf("unit length %d runs past the section (%d bytes left)", unitLen, len(sec)-r.Off)
	}
	end := r.Off + int(unitLen)
	r.Data = sec[:end] // nothing in this unit may read past its end
	t := &lineTable{offset: off}
	t.version = r.U16()
	if r.Err() == nil && (t.version < 2 || t.version > 4) {
		return nil, 0, fmt.Errorf("line table version %d not supported (cubins use 2)", t.version)
	}
	var headerLen uint64
	if offSize == 8 {
		headerLen = r.U64()
	} else {
		headerLen = uint64(r.U32())
	}
	if headerLen > uint64(end-r.Off) {
		return nil, 0, fmt.Errorf("header length %d runs past the unit", headerLen)
	}
	progStart := r.Off + int(headerLen)
	minInst := uint64(r.U8())
	if t.version >= 4 {
		r.U8() // maximum_operations_per_instruction: VLIW only, 1 on GPUs
	}
	defaultIsStmt := r.U8() != 0
	lineBase := int64(int8(r.U8()))
	lineRange := uint64(r.U8())
	opcodeBase := r.U8()
	if r.Err() == nil && lineRange == 0 {
		return nil, 0, fmt.Errorf("line_range is 0")
	}
	stdLens := make([]uint8, 0, 16)
	for i := 1; i < int(opcodeBase) && r.Err() == nil; i++ {
		stdLens = append(stdLens, r.U8())
	}
	hdr := cursor.New(sec[:progStart], le, 0)
	hdr.Seek(r.Off)
	if r.Off > progStart {
		return nil, 0, fmt.Errorf("header fields run past header_length")
	}
	for hdr.Err() == nil {
		d := hdr.CString()
		if d == "" {
			break
		}
		if len(t.dirs) >= maxLineFiles {
			return nil, 0, fmt.Errorf("more than %d include directories", maxLineFiles)
		}
		t.dirs = append(t.dirs, d)
	}
	t.files = []string{""}
	for hdr.Err() == nil {
		name := hdr.CString()
		if name == "" {
			break
		}
		dir := hdr.ULEB128()
		hdr.ULEB128() // modification time
		hdr.ULEB128() // length
		if len(t.files) >= maxLineFiles {
			return nil, 0, fmt.Errorf("more than %d file entries", maxLineFiles)
		}
		t.files = append(t.files, t.joinDir(dir, name))
	}
	if hdr.Err() != nil {
		return nil, 0, fmt.Errorf("header: %v", hdr.Err())
	}
	// NVIDIA: a 4-byte .debug_str base for the function names of this
	// unit follows the file table (elfutils reads it when exactly 4 header
	// bytes are left). nvlink sets it per unit when it merges .debug_str.
	if progStart-hdr.Off == 4 {
		t.strBase = uint64(hdr.U32())
	}
	r.Off = progStart
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
func (t *lineTable) run(r *cursor.Cursor, minInst uint64, defaultIsStmt bool, lineBase int64, lineRange uint64,
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
	for r.Off < len(r.Data) && r.Err() == nil {
		op := r.U8()
		switch {
		case op >= opcodeBase:
			adj := uint64(op - opcodeBase)
			st.addr += adj / lineRange * minInst
			st.line += lineBase + int64(adj%lineRange)
			if err := emit(); err != nil {
				return err
			}
		case op == 0:
			n := r.ULEB128()
			if n == 0 || n > uint64(len(r.Data)-r.Off) {
				r.Fail("extended opcode length %d at %#x", n, r.Off)
				break
			}
			next := r.Off + int(n)
			sub := r.U8()
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
				at := uint64(r.Off)
				var a uint64
				switch n - 1 {
				case 8:
					a = r.U64()
				case 4:
					a = uint64(r.U32())
				default:
					r.Fail("DW_LNE_set_address with %d-byte operand", n-1)
				}
				st.addr = a
				if seq == nil {
					t.sequences = append(t.sequences, lineSequence{addrOffset: at, start: a})
					seq = &t.sequences[len(t.sequences)-1]
				}
			case lneDefineFile:
				name := r.CString()
				dir := r.ULEB128()
				if len(t.files) < maxLineFiles {
					t.files = append(t.files, t.joinDir(dir, name))
				}
			case lneNVIDIAInlinedCall:
				st.context = uint32(min(r.ULEB128(), 1<<31))
				st.name = r.ULEB128()
				st.nameSet = true
			case lneNVIDIASetFunctionName:
				st.name = r.ULEB128()
				st.nameSet = true
			}
			// Skip what we did not read (discriminators, unknown vendor ops).
			if r.Err() == nil {
				if r.Off > next {
					r.Fail("extended opcode %#x overran its length", sub)
				}
				r.Off = next
			}
		case op == lnsCopy:
			if err := emit(); err != nil {
				return err
			}
		case op == lnsAdvancePC:
			st.addr += r.ULEB128() * minInst
		case op == lnsAdvanceLine:
			st.line += r.SLEB128()
		case op == lnsSetFile:
			st.file = uint32(min(r.ULEB128(), 1<<31))
		case op == lnsSetColumn:
			st.column = uint32(min(r.ULEB128(), 1<<31))
		case op == lnsNegateStmt:
			st.isStmt = !st.isStmt
		case op == lnsSetBasicBlock, op == lnsSetPrologueEnd, op == lnsSetEpilogueBegin:
		case op == lnsConstAddPC:
			st.addr += uint64(255-opcodeBase) / lineRange * minInst
		case op == lnsFixedAdvancePC:
			st.addr += uint64(r.U16())
		default:
			// A standard opcode this reader does not know (or lnsSetISA):
			// skip its ULEB128 operands as the header says.
			if int(op-1) < len(stdLens) {
				for i := 0; i < int(stdLens[op-1]); i++ {
					r.ULEB128()
				}
			}
		}
	}
	if r.Err() != nil {
		return r.Err()
	}
	if seq != nil && len(seq.rows) > 0 {
		// No DW_LNE_end_sequence: the last row ends the sequence.
		seq.end = seq.rows[len(seq.rows)-1].addr
	}
	return nil
}
