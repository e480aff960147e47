package debuginfo

// LLVMLineAt returns the line table row that describes pc the way LLVM's
// DWARF reader (llvm-symbolizer, llvm-dwarfdump --lookup) finds it: the
// last row at or before pc in the sequence whose range holds pc, with
// line 0 ("no source line": code the compiler made up) reported as line 0.
// Lookup follows gdb instead, which skips line-0 rows and so reports the
// line before; toolchains whose debugger of record is LLVM's (AMD GPU
// code objects) use this for the innermost level. The file is named as
// Lookup names it.
func (s *Symbols) LLVMLineAt(pc uint64) (file string, line, column int, ok bool) {
	df := s.dwarfData()
	if df == nil {
		return "", 0, 0, false
	}
	for _, u := range df.unitsFor(pc) {
		t, err := df.tree(u)
		if err != nil || t.stmtList < 0 {
			continue
		}
		lt, _ := t.lineTable()
		strs := df.strs
		strs.strOffBase = t.strOffB
		p, _ := parseLineProgram(df.line, uint64(t.stmtList), df.bo, t.hdr.asize, strs)
		if p == nil || lt == nil {
			continue
		}
		if r, found := llvmRowAt(p.rows, pc); found {
			name, _ := lt.fileNameAt(uint64(r.file))
			return name, int(r.line), int(r.column), true
		}
	}
	return "", 0, 0, false
}

// llvmRowAt finds pc's row in rows (sequences in program order, each
// ended by an end_sequence row).
func llvmRowAt(rows []lineRow, pc uint64) (lineRow, bool) {
	start := 0
	for i, r := range rows {
		if !r.endSeq {
			continue
		}
		seq := rows[start : i+1]
		start = i + 1
		if len(seq) < 2 || seq[0].addr == 0 || pc < seq[0].addr || pc >= r.addr {
			continue
		}
		best := -1
		for k, row := range seq[:len(seq)-1] {
			if row.addr <= pc {
				best = k
			}
		}
		if best >= 0 {
			return seq[best], true
		}
	}
	return lineRow{}, false
}
