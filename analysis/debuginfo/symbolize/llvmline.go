package symbolize

import (
	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfline"
	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
)

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
	for _, u := range df.UnitsFor(pc) {
		t, err := df.Tree(u)
		if err != nil || t.StmtList < 0 {
			continue
		}
		lt, _ := t.LineTable()
		strs := df.Strs
		strs.StrOffBase = t.StrOffB
		line := dwarfreader.LineProgramPrefix(df.Line, uint64(t.StmtList), df.Bo)
		p, _ := dwarfline.ParseLineProgram(line, uint64(t.StmtList), df.Bo, t.Hdr.Asize, strs)
		if p == nil || lt == nil {
			continue
		}
		if r, found := dwarfline.LlvmRowAt(p.Rows, pc); found {
			name, _ := lt.FileNameAt(uint64(r.File))
			return name, int(r.Line), int(r.Column), true
		}
	}
	return "", 0, 0, false
}
