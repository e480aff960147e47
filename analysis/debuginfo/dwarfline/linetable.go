package dwarfline

import (
	"sort"
	"strings"
)

// LineTable is one compilation unit's line table arranged the way gdb
// arranges it: one table per source file ("subfile"), built by gdb's
// recording rules (gdb/dwarf2/read.c lnp_state_machine::record_line and
// buildsym_compunit::record_line) and searched like find_pc_sect_line, so
// that the line for a pc is the line `bt` prints.
type LineTable struct {
	subfiles []subfile
	fileSub  []int // line program file index -> subfile, -1 if none
	tables   [][]lineEntry
	order    []int // subfile search order (gdb's compunit filetabs)
}

// subfile is a source file as gdb names it.
type subfile struct {
	name string // what `bt` prints (filename-display relative)
	id   string // name joined with the compilation directory, for identity
}

type lineEntry struct {
	pc     uint64
	line   uint32
	column uint32
	isStmt bool
}

// LineResult is the line for a pc.
type LineResult struct {
	File   string
	Line   int
	Column int
	Ok     bool
}

func isAbsPath(p string) bool { return strings.HasPrefix(p, "/") }

// gdbPathJoin is gdbsupport's path_join: concatenation with one '/' between
// non-empty parts, no cleaning.
func gdbPathJoin(a, b string) string {
	if a == "" {
		return b
	}
	if strings.HasSuffix(a, "/") {
		return a + b
	}
	return a + "/" + b
}

// includeDir is gdb's line_header::include_dir_at: 0-based in DWARF 5,
// 1-based before (index 0, the compilation directory, has no entry).
func (p *lineProgram) includeDir(i uint64) (string, bool) {
	if p.version <= 4 {
		if i == 0 {
			return "", false
		}
		i--
	}
	if i >= uint64(len(p.dirs)) {
		return "", false
	}
	return p.dirs[i], true
}

// fileName is the name gdb gives a line table file entry before subfile
// matching: the directory joined unless the name is absolute.
func (p *lineProgram) fileName(fe lineFile) string {
	if !isAbsPath(fe.name) {
		if dir, ok := p.includeDir(fe.dirIndex); ok {
			return gdbPathJoin(dir, fe.name)
		}
	}
	return fe.name
}

// BuildLineTable arranges a decoded line program like gdb. cuName and
// compDir are the unit's DW_AT_name and DW_AT_comp_dir.
func BuildLineTable(p *lineProgram, cuName, compDir string) *LineTable {
	t := &LineTable{}
	t.startSubfiles(p, cuName, compDir)
	t.tables = make([][]lineEntry, len(t.subfiles))
	rows := p.Rows
	for len(rows) > 0 {
		n := 0
		for n < len(rows) && !rows[n].endSeq {
			n++
		}
		if n < len(rows) {
			n++ // include the end_sequence row
		}
		seq := rows[:n]
		rows = rows[n:]
		// gdb stops recording a sequence whose address is 0 (code removed
		// by the linker) — check_line_address.
		if seq[0].Addr != 0 {
			t.recordSequence(seq)
		}
	}
	for i := range t.tables {
		tab := t.tables[i]
		sort.SliceStable(tab, func(a, b int) bool {
			if tab[a].pc == tab[b].pc && (tab[a].line == 0) != (tab[b].line == 0) {
				return tab[a].line == 0
			}
			return tab[a].pc < tab[b].pc
		})
	}
	// gdb lists the primary file first, then the others newest first.
	if len(t.subfiles) > 0 {
		t.order = append(t.order, 0)
		for i := len(t.subfiles) - 1; i > 0; i-- {
			t.order = append(t.order, i)
		}
	}
	return t
}

// startSubfiles starts the subfiles: the unit's primary source file first
// (gdb's dwarf2_cu::start_compunit_symtab), then every file entry in order
// (dwarf_decode_lines); file entries naming the same file share one.
func (t *LineTable) startSubfiles(p *lineProgram, cuName, compDir string) {
	idOf := func(name string) string {
		if !isAbsPath(name) && compDir != "" {
			return gdbPathJoin(compDir, name)
		}
		return name
	}
	index := make(map[string]int, len(p.Files)+1) // subfile id -> index: linear in the file entries
	start := func(name string) int {
		id := idOf(name)
		if i, ok := index[id]; ok {
			return i
		}
		t.subfiles = append(t.subfiles, subfile{name: name, id: id})
		index[id] = len(t.subfiles) - 1
		return len(t.subfiles) - 1
	}
	if cuName != "" {
		start(cuName)
	}
	t.fileSub = make([]int, len(p.Files))
	for i, fe := range p.Files {
		t.fileSub[i] = -1
		if p.version <= 4 && i == 0 {
			continue
		}
		t.fileSub[i] = start(p.fileName(fe))
	}
}

// recordSequence records the rows of one sequence (ending with its
// end_sequence row) into the subfiles' tables as gdb does.
func (t *LineTable) recordSequence(seq []lineRow) {
	lastSub, lastLine, lastAddr := -1, uint32(0), uint64(0)
	stmtAtAddr := false // an is_stmt row was seen at lastAddr
	for _, r := range seq {
		sub := -1
		if int(r.File) < len(t.fileSub) {
			sub = t.fileSub[r.File]
		}
		if r.endSeq {
			t.finishSubfile(lastSub, r.Addr)
		} else if sub >= 0 {
			fileChanged := sub != lastSub
			// A non-statement row that switches files at an address
			// that already has a statement row would wipe that row
			// out; gdb drops it instead.
			ignore := (fileChanged && lastAddr == r.Addr && !r.isStmt && stmtAtAddr) || r.Line == 0
			if fileChanged && !ignore {
				t.finishSubfile(lastSub, r.Addr)
			}
			if !ignore {
				if fileChanged || r.Line != lastLine || !r.discriminator {
					t.record(sub, r.Line, r.Addr, r.Column, r.isStmt)
				}
				lastSub, lastLine = sub, r.Line
			}
		}
		if lastAddr != r.Addr {
			stmtAtAddr = false
			lastAddr = r.Addr
		}
		stmtAtAddr = stmtAtAddr || r.isStmt
	}
}

// finishSubfile ends subfile sub's run of entries at pc with an end marker.
func (t *LineTable) finishSubfile(sub int, pc uint64) {
	if sub >= 0 {
		t.record(sub, 0, pc, 0, true)
	}
}

// record adds an entry to subfile sub's table. Line 0 is an end marker.
func (t *LineTable) record(sub int, line uint32, pc uint64, column uint32, isStmt bool) {
	tab := t.tables[sub]
	if line == 0 {
		// An end marker removes entries at its pc (they describe no
		// instructions); a marker after nothing or after another marker
		// is dropped.
		lastLine, seen := uint32(0), false
		for len(tab) > 0 {
			last := tab[len(tab)-1]
			lastLine, seen = last.line, true
			if last.pc != pc {
				break
			}
			tab = tab[:len(tab)-1]
		}
		t.tables[sub] = tab
		if !seen || lastLine == 0 {
			return
		}
		isStmt = true
	}
	t.tables[sub] = append(tab, lineEntry{pc: pc, line: line, column: column, isStmt: isStmt})
}

// Lookup finds the line for pc like gdb's find_pc_sect_line: in each file
// the last entry at or below pc (preferring an is_stmt entry at the same
// address), and across files the one with the highest address.
func (t *LineTable) Lookup(pc uint64) LineResult {
	var best *lineEntry
	bestSub := -1
	for _, sub := range t.order {
		tab := t.tables[sub]
		i := sort.Search(len(tab), func(i int) bool { return tab[i].pc > pc })
		if i == 0 {
			continue
		}
		prev := i - 1
		if best != nil && !(tab[prev].pc > best.pc || (tab[prev].pc == best.pc && best.line == 0 && tab[prev].line != 0)) {
			continue
		}
		if !tab[prev].isStmt {
			j := prev
			for j > 0 && tab[j-1].pc == tab[j].pc && tab[j-1].line != 0 && !tab[j].isStmt {
				j--
			}
			if tab[j].isStmt {
				prev = j
			}
		}
		best, bestSub = &tab[prev], sub
	}
	if best == nil || best.line == 0 {
		return LineResult{}
	}
	return LineResult{File: t.subfiles[bestSub].name, Line: int(best.line), Column: int(best.column), Ok: true}
}

// FileNameAt is the name gdb prints for line program file index i (used for
// DW_AT_call_file and DW_AT_decl_file).
func (t *LineTable) FileNameAt(i uint64) (string, bool) {
	if i >= uint64(len(t.fileSub)) || t.fileSub[i] < 0 {
		return "", false
	}
	return t.subfiles[t.fileSub[i]].name, true
}
