package dwarfline

import (
	"encoding/binary"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfform"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// Caps on what a line program header may ask us to allocate.
const (
	maxLineFiles = 1 << 20
	maxLineRows  = 1 << 26
)

// lineFile is one file entry of a line program header, as written: the
// name and directory are not joined (gdb joins them its own way).
type lineFile struct {
	name     string
	dirIndex uint64
}

// lineProgram is a decoded line number program (DWARF 5 §6.2).
type lineProgram struct {
	version int
	dirs    []string   // include_directories as written (DWARF 5: index 0 is the compilation directory)
	Files   []lineFile // file_names; DWARF 5 indexes from 0, DWARF 2-4 from 1 (files[0] is then a placeholder)
	Rows    []lineRow
}

// lineRow is one row of the line number matrix (DWARF 5 §6.2.2).
type lineRow struct {
	Addr          uint64
	File          uint32
	Line          uint32
	Column        uint32
	isStmt        bool
	endSeq        bool
	discriminator bool // a non-zero discriminator was set for this row's line
}

// LineStrings are the string sections that DWARF 5 line headers refer to.
// They are read only as far as the strings a header names (object.Lazy).
type LineStrings struct {
	LineStr    *object.Lazy // .debug_line_str
	Str        *object.Lazy // .debug_str
	StrOffsets *object.Lazy // .debug_str_offsets
	StrOffBase uint64       // the unit's DW_AT_str_offsets_base
}

// Line number program content types (DWARF 5 §6.2.4.1) and opcodes; the
// forms of its entry formats are abbrev.go's.
const (
	lnctPath      = 1
	lnctDirIndex  = 2
	lnsCopy       = 1
	lnsAdvancePC  = 2
	lnsAdvLine    = 3
	lnsSetFile    = 4
	lnsSetColumn  = 5
	lnsNegateStmt = 6
	lnsBasicBlock = 7
	lnsConstAddPC = 8
	lnsFixedAdvPC = 9
	lneEndSeq     = 1
	lneSetAddress = 2
	lneDefineFile = 3
	lneSetDiscrim = 4
)

// ParseLineProgram decodes the line program at off in .debug_line.
func ParseLineProgram(sec []byte, off uint64, bo binary.ByteOrder, addrSize int, strs LineStrings) (*lineProgram, error) {
	if off >= uint64(len(sec)) {
		return nil, &object.FormatError{Format: ".debug_line", Off: int64(off), Msg: "line program offset out of range"}
	}
	c := &cursor.Cursor{Format: ".debug_line", Data: sec[off:], Base: off, Order: bo}
	length, dwarf64 := c.UnitLength()
	if c.Err() != nil {
		return nil, c.Err()
	}
	if length > uint64(c.Len()) {
		return nil, &object.FormatError{Format: ".debug_line", Off: int64(off), Msg: "line program runs past the section"}
	}
	end := c.Off + int(length)
	c.Data = c.Data[:end]
	p := &lineProgram{version: int(c.U16())}
	if p.version < 2 || p.version > 5 {
		return nil, &object.FormatError{Format: ".debug_line", Off: int64(off), Msg: fmt.Sprintf("unsupported line table version %d", p.version)}
	}
	if p.version >= 5 {
		addrSize = int(c.U8())
		c.U8() // segment_selector_size
	}
	hdrLen := c.Offset(dwarf64)
	progStart := c.Off + int(min(hdrLen, uint64(c.Len())))
	minInst := uint64(c.U8())
	if p.version >= 4 {
		c.U8() // maximum_operations_per_instruction: VLIW only, treated as 1
	}
	defaultIsStmt := c.U8() != 0
	lineBase := int64(int8(c.U8()))
	lineRange := uint64(c.U8())
	opcodeBase := int(c.U8())
	stdLens := c.Bytes(max(opcodeBase-1, 0))
	if c.Err() != nil {
		return nil, c.Err()
	}
	if lineRange == 0 {
		return nil, &object.FormatError{Format: ".debug_line", Off: int64(c.Pos()), Msg: "line_range is 0"}
	}
	if p.version >= 5 {
		p.readV5Entries(c, dwarf64, strs)
	} else {
		p.readV4Entries(c)
	}
	if c.Err() != nil {
		return nil, c.Err()
	}
	if addrSize != 1 && addrSize != 2 && addrSize != 4 && addrSize != 8 {
		addrSize = 8
	}
	c.Off = progStart
	p.run(c, minInst, defaultIsStmt, lineBase, lineRange, opcodeBase, stdLens, addrSize)
	return p, c.Err()
}

func (p *lineProgram) readV4Entries(c *cursor.Cursor) {
	p.dirs = nil
	for c.Err() == nil && len(p.dirs) < maxLineFiles {
		d := c.CString()
		if d == "" {
			break
		}
		p.dirs = append(p.dirs, d)
	}
	p.Files = []lineFile{{}} // DWARF 2-4 file indexes start at 1
	for c.Err() == nil && len(p.Files) < maxLineFiles {
		name := c.CString()
		if name == "" {
			break
		}
		dir := c.ULEB128()
		c.ULEB128() // mtime
		c.ULEB128() // length
		p.Files = append(p.Files, lineFile{name: name, dirIndex: dir})
	}
}

// readV5Entries reads the directory and file name tables (DWARF 5 §6.2.4
// items 14-21), each described by a list of (content type, form) pairs.
func (p *lineProgram) readV5Entries(c *cursor.Cursor, dwarf64 bool, strs LineStrings) {
	readTable := func(emit func(path string, dir uint64)) {
		nfmt := int(c.U8())
		type pair struct {
			Lnct uint64
			Form dwarfform.Form
		}
		formats := make([]pair, 0, nfmt)
		for i := 0; i < nfmt && c.Err() == nil; i++ {
			lnct, fm := c.ULEB128(), c.ULEB128()
			if fm > 0xffff {
				c.Fail("unknown form %#x in a line table header", fm)
			}
			formats = append(formats, pair{lnct, dwarfform.Form(fm)})
		}
		count := c.ULEB128()
		if count > maxLineFiles {
			c.Fail("%d entries in a line table header", count)
			return
		}
		for i := uint64(0); i < count && c.Err() == nil; i++ {
			var path string
			var dir uint64
			for _, f := range formats {
				s, v := readLineForm(c, f.Form, dwarf64, strs)
				switch f.Lnct {
				case lnctPath:
					path = s
				case lnctDirIndex:
					dir = v
				}
			}
			emit(path, dir)
		}
	}
	readTable(func(path string, _ uint64) { p.dirs = append(p.dirs, path) })
	readTable(func(path string, dir uint64) { p.Files = append(p.Files, lineFile{name: path, dirIndex: dir}) })
}

// readLineForm reads one attribute value of a line header entry, returning
// its string (for string forms) or its constant.
func readLineForm(c *cursor.Cursor, fm dwarfform.Form, dwarf64 bool, strs LineStrings) (string, uint64) {
	switch fm {
	case dwarfform.FormString:
		return c.CString(), 0
	case dwarfform.FormLineStrp, dwarfform.FormStrp, dwarfform.FormStrpSup:
		off := c.Offset(dwarf64)
		sec := strs.Str
		if fm == dwarfform.FormLineStrp {
			sec = strs.LineStr
		}
		s, _ := sec.CString(off)
		return string(s), 0
	case dwarfform.FormStrx, dwarfform.FormStrx1, dwarfform.FormStrx2, dwarfform.FormStrx3, dwarfform.FormStrx4:
		var idx uint64
		switch fm {
		case dwarfform.FormStrx:
			idx = c.ULEB128()
		case dwarfform.FormStrx1:
			idx = uint64(c.U8())
		case dwarfform.FormStrx2:
			idx = uint64(c.U16())
		case dwarfform.FormStrx3:
			b := c.Bytes(3)
			if b != nil {
				if c.Order == binary.BigEndian {
					idx = uint64(b[0])<<16 | uint64(b[1])<<8 | uint64(b[2])
				} else {
					idx = uint64(b[2])<<16 | uint64(b[1])<<8 | uint64(b[0])
				}
			}
		case dwarfform.FormStrx4:
			idx = uint64(c.U32())
		}
		size := uint64(4)
		if dwarf64 {
			size = 8
		}
		at := strs.StrOffBase + idx*size
		if offs := strs.StrOffsets.Upto(at + size); idx < 1<<40 && at+size <= uint64(len(offs)) {
			var off uint64
			if size == 8 {
				off = c.Order.Uint64(offs[at:])
			} else {
				off = uint64(c.Order.Uint32(offs[at:]))
			}
			s, _ := strs.Str.CString(off)
			return string(s), 0
		}
		return "", 0
	case dwarfform.FormUdata:
		return "", c.ULEB128()
	case dwarfform.FormSdata:
		return "", uint64(c.SLEB128())
	case dwarfform.FormData1:
		return "", uint64(c.U8())
	case dwarfform.FormData2:
		return "", uint64(c.U16())
	case dwarfform.FormData4:
		return "", uint64(c.U32())
	case dwarfform.FormData8:
		return "", c.U64()
	case dwarfform.FormData16:
		c.Skip(16)
	case dwarfform.FormBlock:
		c.Skip(int(c.ULEB128()))
	case dwarfform.FormBlock1:
		c.Skip(int(c.U8()))
	case dwarfform.FormBlock2:
		c.Skip(int(c.U16()))
	case dwarfform.FormBlock4:
		c.Skip(int(c.U32()))
	default:
		c.Fail("unsupported fm %#x in line table header", fm)
	}
	return "", 0
}

// run executes the line number program (DWARF 5 §6.2.5) and records rows.
func (p *lineProgram) run(c *cursor.Cursor, minInst uint64, defaultIsStmt bool, lineBase int64, lineRange uint64,
	opcodeBase int, stdLens []byte, addrSize int) {
	m := &lineMachine{p: p, c: c, minInst: minInst, defaultIsStmt: defaultIsStmt, lineBase: lineBase,
		lineRange: lineRange, opcodeBase: opcodeBase, stdLens: stdLens, addrSize: addrSize}
	m.reset()
	// Most rows take a one-byte special opcode and a few more bytes of
	// column and file changes: one row per 3 bytes saves most regrowth.
	p.Rows = make([]lineRow, 0, min(c.Len()/3+16, 1<<20))
	for c.Err() == nil && c.Len() > 0 {
		op := int(c.U8())
		switch {
		case op >= opcodeBase:
			adj := uint64(op - opcodeBase)
			m.st.Addr += (adj / lineRange) * minInst
			m.advanceLine(lineBase + int64(adj%lineRange))
			m.emit()
		case op == 0:
			if !m.extended() {
				return
			}
		default:
			m.standard(op)
		}
	}
}

// lineMachine is the line number state machine (DWARF 5 §6.2.2) running a
// program with its header's parameters.
type lineMachine struct {
	p             *lineProgram
	c             *cursor.Cursor
	minInst       uint64
	defaultIsStmt bool
	lineBase      int64
	lineRange     uint64
	opcodeBase    int
	stdLens       []byte
	addrSize      int

	st       lineRow
	discr    bool   // gdb's m_line_has_non_zero_discriminator
	curDiscr uint64 // the discriminator register, reset after each row
}

func (m *lineMachine) reset() {
	m.st = lineRow{File: 1, Line: 1, isStmt: m.defaultIsStmt}
	m.discr, m.curDiscr = false, 0
}

// emit appends a row for the current state.
func (m *lineMachine) emit() {
	if len(m.p.Rows) >= maxLineRows {
		m.c.Fail("too many line table rows")
		return
	}
	r := m.st
	r.discriminator = m.discr
	m.p.Rows = append(m.p.Rows, r)
	m.curDiscr = 0
}

func (m *lineMachine) advanceLine(d int64) {
	m.st.Line = uint32(int64(m.st.Line) + d)
	if d != 0 {
		// gdb's lnp_state_machine::advance_line: the flag follows the
		// discriminator in force when the line changes.
		m.discr = m.curDiscr != 0
	}
}

// extended runs an extended opcode (after its 0 byte). It returns false
// when the opcode's length is bad, which ends the program.
func (m *lineMachine) extended() bool {
	c := m.c
	n := c.ULEB128()
	if n == 0 || n > uint64(c.Len()) {
		c.Fail("bad extended opcode length")
		return false
	}
	sub := &cursor.Cursor{Format: c.Format, Data: c.Bytes(int(n)), Base: c.Pos() - n, Order: c.Order}
	switch sub.U8() {
	case lneEndSeq:
		m.st.endSeq = true
		m.emit()
		m.reset()
	case lneSetAddress:
		m.st.Addr = sub.Uint(min(m.addrSize, sub.Len()))
	case lneDefineFile:
		name := sub.CString()
		dir := sub.ULEB128()
		if len(m.p.Files) < maxLineFiles {
			m.p.Files = append(m.p.Files, lineFile{name: name, dirIndex: dir})
		}
	case lneSetDiscrim:
		m.curDiscr = sub.ULEB128()
		m.discr = m.discr || m.curDiscr != 0
	}
	return true
}

// standard runs a standard opcode (below the header's opcode_base).
func (m *lineMachine) standard(op int) {
	c, st := m.c, &m.st
	switch op {
	case lnsCopy:
		m.emit()
	case lnsAdvancePC:
		st.Addr += c.ULEB128() * m.minInst
	case lnsAdvLine:
		m.advanceLine(c.SLEB128())
	case lnsSetFile:
		st.File = uint32(c.ULEB128())
	case lnsSetColumn:
		st.Column = uint32(c.ULEB128())
	case lnsNegateStmt:
		st.isStmt = !st.isStmt
	case lnsBasicBlock:
	case lnsConstAddPC:
		st.Addr += ((255 - uint64(m.opcodeBase)) / m.lineRange) * m.minInst
	case lnsFixedAdvPC:
		st.Addr += uint64(c.U16())
	default:
		// Standard opcodes we do not interpret (prologue_end,
		// epilogue_begin, set_isa, future ones) take ULEB arguments.
		if op-1 < len(m.stdLens) {
			for i := 0; i < int(m.stdLens[op-1]); i++ {
				c.ULEB128()
			}
		}
	}
}
