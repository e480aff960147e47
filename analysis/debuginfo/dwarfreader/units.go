package dwarfreader

import (
	"cmp"
	"slices"
	"sort"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// Finding units without reading the file. A pc's unit is named by
// .debug_aranges (DWARF 5 §6.1.2: address ranges by unit offset), which
// GCC emits for every unit with code; the unit's own top DIE confirms it.
// Unit headers are walked from the start of .debug_info only as far as the
// furthest unit a lookup needs (a DW_FORM_ref_addr, a unit aranges named),
// so a core whose frames lie in the first units of a big, compressed file
// decompresses and reads those units only. Without .debug_aranges, or for
// a pc it does not place, the unit index (every unit's top DIE, cached
// across processes: unitindex.go) decides, as it did before aranges were
// read.

// Unit returns the header of unit i (an index UnitsFor, UnitOf or an
// earlier walk gave).
func (df *DwarfFile) Unit(i int) UnitHeader {
	df.unitsMu.Lock()
	defer df.unitsMu.Unlock()
	return df.units[i]
}

// UnitOf returns the index of the unit containing .debug_info offset off.
func (df *DwarfFile) UnitOf(off uint64) (int, bool) {
	df.unitsMu.Lock()
	defer df.unitsMu.Unlock()
	df.walkTo(off)
	i := sort.Search(len(df.units), func(i int) bool { return df.units[i].End > off })
	if i < len(df.units) && df.units[i].DieOff <= off {
		return i, true
	}
	return 0, false
}

// unitAt returns the index of the unit whose header is at off.
func (df *DwarfFile) unitAt(off uint64) (int, bool) {
	df.unitsMu.Lock()
	defer df.unitsMu.Unlock()
	df.walkTo(off)
	i := sort.Search(len(df.units), func(i int) bool { return df.units[i].Off >= off })
	return i, i < len(df.units) && df.units[i].Off == off
}

// allUnits walks every unit header and returns them; the error is the
// damage that stopped the walk, if any.
func (df *DwarfFile) allUnits() ([]UnitHeader, error) {
	df.unitsMu.Lock()
	defer df.unitsMu.Unlock()
	err := df.walkTo(^uint64(0))
	return df.units, err
}

// setUnits replaces the walk with a complete list of unit headers (the
// unit index read from the cache).
func (df *DwarfFile) setUnits(units []UnitHeader) {
	df.unitsMu.Lock()
	defer df.unitsMu.Unlock()
	if len(units) >= len(df.units) {
		df.units, df.walkDone = units, true
	}
}

// walkTo reads unit headers until one ends past off or none is left;
// df.unitsMu is held. It returns the error that ended the walk early.
func (df *DwarfFile) walkTo(off uint64) error {
	info := df.Sec.Info
	for !df.walkDone && (len(df.units) == 0 || df.units[len(df.units)-1].End <= off) {
		if df.walkOff >= info.Size() {
			df.walkDone = true
			break
		}
		if len(df.units) >= maxUnits {
			df.walkDone = true
			return &object.FormatError{Path: df.Obj.Path(), Format: ".debug_info", Off: int64(df.walkOff), Msg: "too many units"}
		}
		u, err := readUnitHeader(info.Upto(df.walkOff+maxUnitHeader), df.walkOff, info.Size(), df.Bo)
		if err != nil {
			df.walkDone = true
			if ferr, ok := err.(*object.FormatError); ok && ferr.Path == "" {
				ferr.Path = df.Obj.Path()
			}
			return err
		}
		df.units = append(df.units, u)
		df.walkOff = u.End
	}
	return nil
}

// arangeIndex is .debug_aranges sorted by low address, with the running
// maximum of high addresses for the backwards scan.
type arangeIndex struct {
	ranges []arange
	maxHi  []uint64
	byUnit map[uint64][][2]uint64
}

type arange struct {
	Lo, Hi, unitOff uint64
}

// arangesIndex parses .debug_aranges once.
func (df *DwarfFile) arangesIndex() *arangeIndex {
	df.arangesOnce.Do(func() {
		b, _, ok := df.Obj.Section(".debug_aranges")
		if !ok {
			return
		}
		x := &df.aranges
		x.byUnit = ParseAranges(b, df.Bo)
		for off, rs := range x.byUnit {
			for _, rg := range rs {
				x.ranges = append(x.ranges, arange{rg[0], rg[1], off})
			}
		}
		slices.SortFunc(x.ranges, func(a, b arange) int {
			return cmp.Or(cmp.Compare(a.Lo, b.Lo), cmp.Compare(a.unitOff, b.unitOff))
		})
		x.maxHi = make([]uint64, len(x.ranges))
		var m uint64
		for i, rg := range x.ranges {
			m = max(m, rg.Hi)
			x.maxHi[i] = m
		}
	})
	return &df.aranges
}

// arangesByUnit is .debug_aranges by unit offset (nil without it).
func (df *DwarfFile) arangesByUnit() map[uint64][][2]uint64 {
	return df.arangesIndex().byUnit
}

// unitsByAranges returns the units .debug_aranges places pc in whose top
// DIE agrees (its ranges hold pc, or it has none, as the unit index then
// takes the aranges'), in .debug_info order; nil when there are none.
func (df *DwarfFile) unitsByAranges(pc uint64) []int {
	x := df.arangesIndex()
	i := sort.Search(len(x.ranges), func(i int) bool { return x.ranges[i].Lo > pc }) - 1
	var offs []uint64
	for ; i >= 0 && x.maxHi[i] > pc; i-- {
		if rg := x.ranges[i]; pc < rg.Hi && !slices.Contains(offs, rg.unitOff) {
			offs = append(offs, rg.unitOff)
		}
	}
	slices.Sort(offs)
	if len(offs) > 0 {
		df.prefetchFor(offs[len(offs)-1])
	}
	var out []int
	for _, off := range offs {
		u, ok := df.unitAt(off)
		if ok && df.unitHolds(u, pc) {
			out = append(out, u)
		}
	}
	return out
}

// prefetchFor starts decompressing, on other cores, the sections a unit
// at .debug_info offset off will read besides .debug_info (which its
// reader decompresses meanwhile): GCC writes each unit's abbreviations,
// line program and range lists in unit order, so the same fraction of
// those sections is about as far as this unit's parts start.
func (df *DwarfFile) prefetchFor(off uint64) {
	size := df.Sec.Info.Size()
	if size == 0 || off > size {
		return
	}
	for _, sec := range []*object.Lazy{df.Sec.Abbrev, df.Line, df.Sec.Rnglists} {
		sec.Prefetch(uint64(float64(sec.Size()) * float64(off) / float64(size)))
	}
}

// unitHolds reports whether unit i's top DIE puts pc in the unit (for a
// unit aranges placed pc in).
func (df *DwarfFile) unitHolds(i int, pc uint64) bool {
	u := df.Unit(i)
	if u.Utype != UtCompile && u.Utype != UtPartial && u.Utype != utSkeleton {
		return false
	}
	df.mu.Lock()
	rs, ok := df.topRanges[i]
	df.mu.Unlock()
	if !ok {
		rs = df.UnitRanges(u)
		df.mu.Lock()
		if df.topRanges == nil {
			df.topRanges = map[int][][2]uint64{}
		}
		df.topRanges[i] = rs
		df.mu.Unlock()
	}
	if len(rs) == 0 {
		return true
	}
	for _, rg := range rs {
		if rg[0] <= pc && pc < rg[1] {
			return true
		}
	}
	return false
}

// Units returns every unit header of the file, walking the rest of
// .debug_info (for tests and whole-file tools; lookups walk only as far as
// they need).
func (df *DwarfFile) Units() []UnitHeader {
	units, _ := df.allUnits()
	return units
}

// UnitsWalked is how many unit headers have been read so far.
func (df *DwarfFile) UnitsWalked() int {
	df.unitsMu.Lock()
	defer df.unitsMu.Unlock()
	return len(df.units)
}
