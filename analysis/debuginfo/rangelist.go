package debuginfo

// Address ranges of a DIE (DWARF 5 §2.17): DW_AT_low_pc with DW_AT_high_pc,
// and DW_AT_ranges into .debug_ranges (DWARF 2-4, §2.17.3 of DWARF 4) or
// .debug_rnglists (DWARF 5 §2.17.3, §7.25). The results are those of
// debug/dwarf's Data.Ranges, which the rest of the package was checked
// against gdb with.

// maxRanges caps the ranges one DIE may list.
const maxRanges = 1 << 16

// Range list entry kinds (DWARF 5 §7.25, Table 7.30).
const (
	rleEndOfList    = 0x00
	rleBaseAddressx = 0x01
	rleStartxEndx   = 0x02
	rleStartxLength = 0x03
	rleOffsetPair   = 0x04
	rleBaseAddress  = 0x05
	rleStartEnd     = 0x06
	rleStartLength  = 0x07
)

// highKind says how DW_AT_high_pc was given.
type highKind uint8

const (
	highNone   highKind = iota
	highAddr            // an address
	highOffset          // a constant: an offset from DW_AT_low_pc (DWARF 4+)
)

// pcAttrs are the attributes of one DIE that say where its code is.
type pcAttrs struct {
	low, entry    uint64
	hasLow        bool
	hasEntry      bool
	high          uint64
	highKind      highKind
	ranges        attrVal // DW_AT_ranges, class valNone when absent
	hasRangesAttr bool
}

// unitRangeCtx is what a unit's range lists are read with: the unit DIE's
// base address (DW_AT_entry_pc or DW_AT_low_pc, as debug/dwarf and gdb
// take it) and its DW_AT_addr_base.
type unitRangeCtx struct {
	vers     int
	asize    int
	base     uint64
	addrBase uint64
}

// appendRanges appends the DIE's address ranges to dst; ok is false where
// its range list is malformed (then dst comes back as given).
func (df *dwarfFile) appendRanges(dst [][2]uint64, p *pcAttrs, u *unitRangeCtx) (out [][2]uint64, ok bool) {
	start := len(dst)
	if p.hasLow {
		switch p.highKind {
		case highAddr:
			dst = append(dst, [2]uint64{p.low, p.high})
		case highOffset:
			dst = append(dst, [2]uint64{p.low, p.low + p.high})
		}
	}
	if !p.hasRangesAttr {
		return dst, true
	}
	if u.vers >= 5 && df.sec.rnglists != nil {
		var off uint64
		switch p.ranges.class {
		case valSecOff:
			off = p.ranges.u
		case valRnglist:
			off = p.ranges.u
		default:
			return dst, true
		}
		dst, ok = df.rnglist(dst, off, u)
		if !ok {
			return dst[:start], false
		}
		return dst, true
	}
	v, isInt := p.ranges.int64()
	if !isInt || df.sec.ranges == nil {
		return dst, true
	}
	dst, ok = df.debugRanges(dst, v, u)
	if !ok {
		return dst[:start], false
	}
	return dst, true
}

// debugRanges reads a DWARF 2-4 range list: pairs of addresses, a base
// address selection entry (the largest address, then the base), ended by
// two zeros.
func (df *dwarfFile) debugRanges(dst [][2]uint64, off int64, u *unitRangeCtx) ([][2]uint64, bool) {
	sec := df.sec.ranges
	if off < 0 || off > int64(len(sec)) {
		return dst, false
	}
	if u.asize < 1 || u.asize > 8 {
		return dst, false
	}
	r := dieReader{b: sec, pos: int(off), end: len(sec), bo: df.bo}
	base := u.base
	maxAddr := ^uint64(0) >> uint((8-u.asize)*8)
	for n := 0; r.pos < r.end && n < maxRanges; n++ {
		lo := r.uint(u.asize)
		hi := r.uint(u.asize)
		if r.bad || lo == 0 && hi == 0 {
			break
		}
		if lo == maxAddr {
			base = hi
		} else {
			dst = append(dst, [2]uint64{base + lo, base + hi})
		}
	}
	return dst, true
}

// rnglist reads a DWARF 5 range list at off in .debug_rnglists.
func (df *dwarfFile) rnglist(dst [][2]uint64, off uint64, u *unitRangeCtx) ([][2]uint64, bool) {
	sec := df.sec.rnglists
	if off > uint64(len(sec)) {
		return dst, false
	}
	r := dieReader{b: sec, pos: int(off), end: len(sec), bo: df.bo}
	base := u.base
	addr := func(idx uint64) uint64 {
		a, ok := df.debugAddr(u.addrBase, idx, u.asize)
		if !ok {
			r.fail()
		}
		return a
	}
	for n := 0; n < maxRanges; n++ {
		op := r.u8()
		if r.bad {
			return dst, false
		}
		switch op {
		case rleEndOfList:
			return dst, true
		case rleBaseAddressx:
			base = addr(r.uleb())
		case rleStartxEndx:
			lo := addr(r.uleb())
			hi := addr(r.uleb())
			dst = append(dst, [2]uint64{lo, hi})
		case rleStartxLength:
			lo := addr(r.uleb())
			dst = append(dst, [2]uint64{lo, lo + r.uleb()})
		case rleOffsetPair:
			lo, hi := r.uleb(), r.uleb()
			dst = append(dst, [2]uint64{base + lo, base + hi})
		case rleBaseAddress:
			base = r.uint(u.asize)
		case rleStartEnd:
			lo := r.uint(u.asize)
			hi := r.uint(u.asize)
			dst = append(dst, [2]uint64{lo, hi})
		case rleStartLength:
			lo := r.uint(u.asize)
			dst = append(dst, [2]uint64{lo, lo + r.uleb()})
		default:
			return dst, false
		}
		if r.bad {
			return dst, false
		}
	}
	return dst, false
}
