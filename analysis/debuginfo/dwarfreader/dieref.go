package dwarfreader

import (
	"debug/dwarf"
)

// DieRef is a DIE in some unit of a debug file.
type DieRef struct {
	T   *UnitTree
	Idx int
}

func (r DieRef) Die() *Die { return &r.T.Dies[r.Idx] }

// Resolve follows a reference attribute value to its DIE, decoding the
// unit it lives in if that is another one (DW_FORM_ref_addr).
func (t *UnitTree) Resolve(off dwarf.Offset) (DieRef, bool) {
	if off == 0 {
		return DieRef{}, false
	}
	if i, ok := t.Find(off); ok {
		return DieRef{t, i}, true
	}
	u, ok := t.Df.UnitOf(uint64(off))
	if !ok {
		return DieRef{}, false
	}
	ot, err := t.Df.Tree(u)
	if err != nil {
		return DieRef{}, false
	}
	if i, ok := ot.Find(off); ok {
		return DieRef{ot, i}, true
	}
	return DieRef{}, false
}
