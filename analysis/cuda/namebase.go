package cuda

import (
	"fmt"
	"sort"
)

// repairNameBases checks each line table's NVIDIA .debug_str base against
// the strings its function names must land on, and repairs it when nvlink
// left it unset.
//
// nvlink concatenates the .debug_str sections of the objects it links and
// must set each unit's 4-byte base (after the file table) to where that
// unit's strings start. Objects for sm_90 carry that base as a RELA
// relocation against .debug_str; nvlink 11.8 drops it, leaving 0, so the
// names of every unit after the first point into the first unit's strings,
// usually into the middle of one (testdata/cuda: rdc_linked.sm_90.cubin,
// where nvdisasm prints no names and eu-readelf prints suffixes such as
// "_PKS1_l"). A base is right when every name offset of the unit lands on
// the start of a string; when the recorded base fails that test, the
// smallest base past the strings of the earlier units that passes it is
// the one nvlink should have written.
func (c *Cubin) repairNameBases(tables []*lineTable) {
	if len(c.debugStr) == 0 {
		return
	}
	starts := map[uint64]bool{0: true}
	var sorted []uint64
	sorted = append(sorted, 0)
	for i, b := range c.debugStr {
		if b == 0 && i+1 < len(c.debugStr) {
			starts[uint64(i+1)] = true
			sorted = append(sorted, uint64(i+1))
		}
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	fits := func(base uint64, names []uint64) bool {
		for _, n := range names {
			if !starts[base+n] {
				return false
			}
		}
		return true
	}
	var floor uint64 // past the strings the earlier units use
	for _, t := range tables {
		names := t.nameOffsets()
		if len(names) == 0 {
			continue
		}
		if !fits(t.strBase, names) {
			old := t.strBase
			i := sort.Search(len(sorted), func(i int) bool { return sorted[i] >= floor })
			for ; i < len(sorted); i++ {
				if fits(sorted[i], names) {
					t.strBase = sorted[i]
					break
				}
			}
			if t.strBase != old {
				c.Problems = append(c.Problems, fmt.Sprintf(
					"line table at %#x: function names start at .debug_str+%#x, not at the recorded %#x (base left unset by the linker; repaired)",
					t.offset, t.strBase, old))
			} else {
				c.Problems = append(c.Problems, fmt.Sprintf(
					"line table at %#x: function name offsets do not land on .debug_str strings; inlined function names may be wrong", t.offset))
			}
		}
		for _, n := range names {
			floor = max(floor, t.strBase+n+1)
		}
	}
}

// nameOffsets returns the distinct function-name offsets the table uses.
func (t *lineTable) nameOffsets() []uint64 {
	seen := map[uint64]bool{}
	var out []uint64
	for _, s := range t.sequences {
		for _, r := range s.rows {
			if r.nameSet && !seen[r.name] {
				seen[r.name] = true
				out = append(out, r.name)
			}
		}
	}
	return out
}
