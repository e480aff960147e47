package dwarfline

import "sort"

// LastLine is the highest line in [from, before) that the table gives an
// address in ranges in the file named file (as FileNameAt names it); 0 if
// none.
func (t *LineTable) LastLine(file string, ranges [][2]uint64, from, before int) int {
	last := 0
	for sub, s := range t.subfiles {
		if s.name != file {
			continue
		}
		tab := t.tables[sub]
		for _, rg := range ranges {
			j := sort.Search(len(tab), func(j int) bool { return tab[j].pc >= rg[0] })
			for ; j < len(tab) && tab[j].pc < rg[1]; j++ {
				if l := int(tab[j].line); l >= from && l < before && l > last {
					last = l
				}
			}
		}
	}
	return last
}
