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
			return tables, &FormatError{Format: ".debug_line unit", Off: int64(off), Msg: err.Error(), Err: err}
		}
		tables = append(tables, t)
		off = next
	}
	return tables, nil
}

// parseLineTable decodes the unit at off and returns the offset of the next.
func parseLineTable(sec []byte, off uint64) (*lineTable, uint64, error) {
	r, end, offSize, err := lineUnit(sec, off)
	if err != nil {
		return nil, 0, err
	}
	t := &lineTable{offset: off}
	h, err := t.readHeader(r, end, offSize)
	if err != nil {
		return nil, 0, err
	}
	if err := t.readFileTable(sec[:h.progStart], r.Off); err != nil {
		return nil, 0, err
	}
	r.Off = h.progStart
	if err := t.run(r, h); err != nil {
		return t, 0, err
	}
	return t, uint64(end), nil
}

// lineUnit returns a cursor over the unit at off, past its unit_length and
// unable to read past the unit's end, the end, and the unit's offset size.
func lineUnit(sec []byte, off uint64) (r *cursor.Cursor, end, offSize int, err error) {
	r = cursor.New(sec, le, 0)
	r.Seek(int(min(off, uint64(len(sec)))))
	unitLen := uint64(r.U32())
	offSize = 4
	if unitLen == 0xffffffff { // 64-bit DWARF (DWARF 3 §7.4)
		unitLen = r.U64()
		offSize = 8
	}
	if r.Err() != nil {
		return nil, 0, 0, r.Err()
	}
	if unitLen > uint64(len(sec)-r.Off) {
		return nil, 0, 0, fmt.Errorf("unit length %d runs past the section (%d bytes left)", unitLen, len(sec)-r.Off)
	}
	end = r.Off + int(unitLen)
	r.Data = sec[:end] // nothing in this unit may read past its end
	return r, end, offSize, nil
}

// lineHeader is what the line-number program needs of its header (DWARF 2
// §6.2.4).
type lineHeader struct {
	minInst       uint64
	defaultIsStmt bool
	lineBase      int64
	lineRange     uint64
	opcodeBase    uint8
	stdLens       []uint8 // operand counts of the standard opcodes
	progStart     int     // offset of the program in .debug_line
}

// readHeader reads the header from its version to the standard opcode
// lengths, leaving r at the include directories.
func (t *lineTable) readHeader(r *cursor.Cursor, end, offSize int) (lineHeader, error) {
	var h lineHeader
	t.version = r.U16()
	if r.Err() == nil && (t.version < 2 || t.version > 4) {
		return h, fmt.Errorf("line table version %d not supported (cubins use 2)", t.version)
	}
	var headerLen uint64
	if offSize == 8 {
		headerLen = r.U64()
	} else {
		headerLen = uint64(r.U32())
	}
	if headerLen > uint64(end-r.Off) {
		return h, fmt.Errorf("header length %d runs past the unit", headerLen)
	}
	h.progStart = r.Off + int(headerLen)
	h.minInst = uint64(r.U8())
	if t.version >= 4 {
		r.U8() // maximum_operations_per_instruction: VLIW only, 1 on GPUs
	}
	h.defaultIsStmt = r.U8() != 0
	h.lineBase = int64(int8(r.U8()))
	h.lineRange = uint64(r.U8())
	h.opcodeBase = r.U8()
	if r.Err() == nil && h.lineRange == 0 {
		return h, fmt.Errorf("line_range is 0")
	}
	h.stdLens = make([]uint8, 0, 16)
	for i := 1; i < int(h.opcodeBase) && r.Err() == nil; i++ {
		h.stdLens = append(h.stdLens, r.U8())
	}
	if r.Off > h.progStart {
		return h, fmt.Errorf("header fields run past header_length")
	}
	return h, nil
}

// readFileTable reads the include directories and the file names that
// start at from in header (the header up to the program), then NVIDIA's
// .debug_str base.
func (t *lineTable) readFileTable(header []byte, from int) error {
	hdr := cursor.New(header, le, 0)
	hdr.Seek(from)
	for hdr.Err() == nil {
		d := hdr.CString()
		if d == "" {
			break
		}
		if len(t.dirs) >= maxLineFiles {
			return fmt.Errorf("more than %d include directories", maxLineFiles)
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
			return fmt.Errorf("more than %d file entries", maxLineFiles)
		}
		t.files = append(t.files, t.joinDir(dir, name))
	}
	if hdr.Err() != nil {
		return fmt.Errorf("header: %v", hdr.Err())
	}
	// NVIDIA: a 4-byte .debug_str base for the function names of this
	// unit follows the file table (elfutils reads it when exactly 4 header
	// bytes are left). nvlink sets it per unit when it merges .debug_str.
	if len(header)-hdr.Off == 4 {
		t.strBase = uint64(hdr.U32())
	}
	return nil
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

// lineState is the line-number state machine's registers (DWARF 2
// §6.2.2) with NVIDIA's inline context and function name.
type lineState struct {
	addr    uint64
	file    uint32
	line    int64
	column  uint32
	isStmt  bool
	context uint32
	name    uint64
	nameSet bool
}

// lineProgram is one run of a line-number program into a table.
type lineProgram struct {
	t    *lineTable
	h    lineHeader
	st   lineState
	seq  *lineSequence // the sequence being written, nil between sequences
	rows int
}

func (p *lineProgram) reset() { p.st = lineState{file: 1, line: 1, isStmt: p.h.defaultIsStmt} }

// run executes the line-number program (DWARF 2 §6.2.5).
func (t *lineTable) run(r *cursor.Cursor, h lineHeader) error {
	p := &lineProgram{t: t, h: h}
	p.reset()
	for r.Off < len(r.Data) && r.Err() == nil {
		op := r.U8()
		var err error
		switch {
		case op >= h.opcodeBase:
			adj := uint64(op - h.opcodeBase)
			p.st.addr += adj / h.lineRange * h.minInst
			p.st.line += h.lineBase + int64(adj%h.lineRange)
			err = p.emit()
		case op == 0:
			err = p.extended(r)
		default:
			err = p.standard(r, op)
		}
		if err != nil {
			return err
		}
	}
	if r.Err() != nil {
		return r.Err()
	}
	if p.seq != nil && len(p.seq.rows) > 0 {
		// No DW_LNE_end_sequence: the last row ends the sequence.
		p.seq.end = p.seq.rows[len(p.seq.rows)-1].addr
	}
	return nil
}

// emit appends a row for the current state.
func (p *lineProgram) emit() error {
	t, st := p.t, &p.st
	if p.seq == nil {
		// Rows before any DW_LNE_set_address: address 0 of an
		// unknown section.
		t.sequences = append(t.sequences, lineSequence{addrOffset: ^uint64(0), start: st.addr})
		p.seq = &t.sequences[len(t.sequences)-1]
	}
	if p.rows++; p.rows > maxLineRows {
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
	if n := len(p.seq.rows); n > 0 && p.seq.rows[n-1] == row {
		return nil
	}
	p.seq.rows = append(p.seq.rows, row)
	return nil
}

// extended runs an extended opcode (after its 0 byte), NVIDIA's included.
func (p *lineProgram) extended(r *cursor.Cursor) error {
	t, st := p.t, &p.st
	n := r.ULEB128()
	if n == 0 || n > uint64(len(r.Data)-r.Off) {
		r.Fail("extended opcode length %d at %#x", n, r.Off)
		return nil
	}
	next := r.Off + int(n)
	sub := r.U8()
	switch sub {
	case lneEndSequence:
		if err := p.emit(); err != nil {
			return err
		}
		p.seq.end = st.addr
		p.seq.rows = p.seq.rows[:len(p.seq.rows)-1] // the end row is not code
		p.seq = nil
		p.reset()
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
		if p.seq == nil {
			t.sequences = append(t.sequences, lineSequence{addrOffset: at, start: a})
			p.seq = &t.sequences[len(t.sequences)-1]
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
	return nil
}

// standard runs a standard opcode (below the header's opcode_base).
func (p *lineProgram) standard(r *cursor.Cursor, op uint8) error {
	st, h := &p.st, &p.h
	switch op {
	case lnsCopy:
		return p.emit()
	case lnsAdvancePC:
		st.addr += r.ULEB128() * h.minInst
	case lnsAdvanceLine:
		st.line += r.SLEB128()
	case lnsSetFile:
		st.file = uint32(min(r.ULEB128(), 1<<31))
	case lnsSetColumn:
		st.column = uint32(min(r.ULEB128(), 1<<31))
	case lnsNegateStmt:
		st.isStmt = !st.isStmt
	case lnsSetBasicBlock, lnsSetPrologueEnd, lnsSetEpilogueBegin:
	case lnsConstAddPC:
		st.addr += uint64(255-h.opcodeBase) / h.lineRange * h.minInst
	case lnsFixedAdvancePC:
		st.addr += uint64(r.U16())
	default:
		// A standard opcode this reader does not know (or lnsSetISA):
		// skip its ULEB128 operands as the header says.
		if int(op-1) < len(h.stdLens) {
			for i := 0; i < int(h.stdLens[op-1]); i++ {
				r.ULEB128()
			}
		}
	}
	return nil
}
