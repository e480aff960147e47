package dwarfreader

import (
	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfform"
)

// Block reads a block or exprloc value of form f; false (and r failed)
// when it runs past the DIE's unit.
func (r *DieReader) Block(f dwarfform.Form) ([]byte, bool) {
	var n uint64
	switch f {
	case dwarfform.FormBlock1:
		n = uint64(r.U8())
	case dwarfform.FormBlock2:
		n = r.Uint(2)
	case dwarfform.FormBlock4:
		n = r.Uint(4)
	default:
		n = r.Uleb()
	}
	if r.Bad || n > uint64(r.End-r.Pos) {
		r.Fail()
		return nil, false
	}
	b := r.B[r.Pos : r.Pos+int(n)]
	r.Pos += int(n)
	return b, true
}
