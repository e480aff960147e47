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
// unit it lives in if that is another one (DW_FORM_ref_addr), or in the
// supplementary file when sup is set (DW_FORM_GNU_ref_alt, DW_FORM_ref_sup*).
func (t *UnitTree) Resolve(off dwarf.Offset, sup bool) (DieRef, bool) {
	if off == 0 {
		return DieRef{}, false
	}
	df := t.Df
	if sup {
		if df = df.supFile(); df == nil {
			return DieRef{}, false
		}
	} else if i, ok := t.Find(off); ok {
		return DieRef{t, i}, true
	}
	u, ok := df.UnitOf(uint64(off))
	if !ok {
		return DieRef{}, false
	}
	ot, err := df.Tree(u)
	if err != nil {
		return DieRef{}, false
	}
	if i, ok := ot.Find(off); ok {
		return DieRef{ot, i}, true
	}
	return DieRef{}, false
}
