package dwarfreader

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfline"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// maxUnits caps the number of compilation units indexed in one file.
const maxUnits = 1 << 22

// DwarfFile is the DWARF of one debug file, decoded lazily: sections are
// decompressed only as far as the units read need (object.Lazy); a unit
// is found for a pc through .debug_aranges where the file has it (units.go)
// and through the unit index (the address ranges of every unit's top DIE)
// otherwise; the DIE tree and line table of a unit are read only when a
// looked-up pc falls in it.
type DwarfFile struct {
	Obj  *object.Object
	Bo   binary.ByteOrder
	Line *object.Lazy
	Strs dwarfline.LineStrings
	Sec  DwarfSections

	abbrevCache map[abbrevKey]*abbrevTable // guarded by mu

	// The unit headers walked so far, in section order (units.go): from
	// the first unit to the furthest one a lookup needed.
	unitsMu  sync.Mutex
	units    []UnitHeader
	walkOff  uint64 // where the walk goes on
	walkDone bool   // every header read (or the walk hit damage)

	arangesOnce sync.Once
	aranges     arangeIndex         // .debug_aranges by address (units.go)
	topRanges   map[int][][2]uint64 // units' top-DIE ranges, read once; guarded by mu

	IndexOnce sync.Once
	Ranges    []unitRange // sorted by lo
	MaxHi     []uint64    // maxHi[i] = max(ranges[0..i].hi)
	indexErr  error

	mu      sync.Mutex
	Decoded map[int]*UnitTree
	// lru lists decoded units, most recently used last; decodedDIEs counts
	// their DIEs. Units past maxCachedDIEs are dropped oldest first, so
	// memory follows the units in use, not every unit a core ever touched.
	lru         []int
	decodedDIEs int

	Dwo *dwoSearch // where split units' .dwo files are (splitdwarf.go)
	// skeleton is set on the DwarfFile of a .dwo (or a .dwp unit): what the
	// binary's skeleton unit says its split unit is read with.
	skeleton *skeleton
	// sup is the supplementary (dwz) file, opened when a reference or a
	// string first needs it (supplementary.go).
	sup *supplementary
}

// UnitHeader is where one unit of .debug_info lies (DWARF 5 §7.5.1).
type UnitHeader struct {
	Off    uint64 // offset of the unit header
	DieOff uint64 // offset of the first DIE
	End    uint64
	Vers   int
	Utype  uint8
	is64   bool
	Asize  int
	dwoID  uint64 // skeleton and split units (DWARF 5)

	abbrevOff uint64 // debug_abbrev_offset
}

// DwarfSections are the sections decodeUnit reads DIEs and their strings,
// addresses and ranges from (nil where absent), each read only as far as
// needed.
type DwarfSections struct {
	Info, Abbrev, Str, LineStr, StrOffsets, Addr, Ranges, Rnglists *object.Lazy
	// SplitLoc is a split unit's location lists (.debug_loclists.dwo, or
	// DWARF 4's .debug_loc.dwo, or its contribution in a .dwp); nil
	// outside split files.
	SplitLoc *object.Lazy
}

type unitRange struct {
	Lo, Hi uint64
	unit   int
}

// Unit is the index of the unit the range belongs to.
func (r unitRange) Unit() int { return r.unit }

// Unit types (DWARF 5 §7.5.1).
const (
	UtCompile  = 0x01
	utType     = 0x02
	UtPartial  = 0x03
	utSkeleton = 0x04
	utSplitCU  = 0x05
	utSplitTU  = 0x06
)

// OpenDWARF finds the object's DWARF sections and reads the first unit's
// header. Nothing else is read (or decompressed) until a lookup needs it;
// nil, nil when the object has no readable .debug_info.
func OpenDWARF(o *object.Object) (*DwarfFile, error) {
	info := o.Lazy(".debug_info")
	if info == nil || info.Size() == 0 {
		return nil, nil
	}
	if _, err := readUnitHeader(info.Upto(maxUnitHeader), 0, info.Size(), o.Elf.ByteOrder); err != nil {
		if info.Err() != nil {
			return nil, nil // as an undecompressable section: no DWARF
		}
		return nil, fmt.Errorf("%s: %w", o.Path(), err)
	}
	str, lineStr, strOffsets := o.Lazy(".debug_str"), o.Lazy(".debug_line_str"), o.Lazy(".debug_str_offsets")
	return &DwarfFile{
		Obj:  o,
		Bo:   o.Elf.ByteOrder,
		Line: o.Lazy(".debug_line"),
		Strs: dwarfline.LineStrings{LineStr: lineStr, Str: str, StrOffsets: strOffsets},
		Sec: DwarfSections{Info: info, Abbrev: o.Lazy(".debug_abbrev"), Str: str, LineStr: lineStr,
			StrOffsets: strOffsets, Addr: o.Lazy(".debug_addr"), Ranges: o.Lazy(".debug_ranges"), Rnglists: o.Lazy(".debug_rnglists")},
		Decoded: map[int]*UnitTree{},
	}, nil
}

// maxUnitHeader bounds a unit header's size (a 64-bit DWARF 5 skeleton's:
// 12 + 2 + 1 + 1 + 8 + 8).
const maxUnitHeader = 32

// ParseUnitHeaders walks .debug_info unit headers without reading DIEs.
func ParseUnitHeaders(info []byte, bo binary.ByteOrder) ([]UnitHeader, error) {
	var units []UnitHeader
	for off := uint64(0); off < uint64(len(info)); {
		if len(units) >= maxUnits {
			return units, &object.FormatError{Format: ".debug_info", Off: int64(off), Msg: "too many units"}
		}
		u, err := readUnitHeader(info, off, uint64(len(info)), bo)
		if err != nil {
			return units, err
		}
		units = append(units, u)
		off = u.End
	}
	return units, nil
}

// readUnitHeader reads the header of the unit at off (DWARF 5 §7.5.1) in
// b, a prefix of .debug_info, whose whole size is size.
func readUnitHeader(b []byte, off, size uint64, bo binary.ByteOrder) (UnitHeader, error) {
	c := &cursor.Cursor{Format: ".debug_info", Data: b, Order: bo}
	if off > uint64(len(b)) {
		return UnitHeader{}, &object.FormatError{Format: ".debug_info", Off: int64(off), Msg: "unit header past the section"}
	}
	c.Off = int(off)
	u := UnitHeader{Off: off}
	length, is64 := c.UnitLength()
	if c.Err() != nil {
		return u, c.Err()
	}
	start := uint64(c.Off)
	if length > size-start {
		return u, &object.FormatError{Format: ".debug_info", Off: int64(u.Off), Msg: "unit runs past the section"}
	}
	u.End = start + length
	u.is64 = is64
	u.Vers = int(c.U16())
	switch {
	case u.Vers == 5:
		u.Utype = c.U8()
		u.Asize = int(c.U8())
		u.abbrevOff = c.Offset(is64)
		switch u.Utype {
		case utSkeleton, utSplitCU:
			u.dwoID = c.U64()
		case utType, utSplitTU:
			c.U64() // type_signature
			c.Offset(is64)
		}
	case u.Vers >= 2 && u.Vers <= 4:
		u.Utype = UtCompile
		u.abbrevOff = c.Offset(is64)
		u.Asize = int(c.U8())
	default:
		u.Utype = 0 // unknown version: skipped
	}
	u.DieOff = c.Pos()
	return u, c.Err()
}

// Index builds the unit address index once, or maps it from the index
// cache (unitindex.go) when an earlier process built it for this file.
// It reads every unit's header and top DIE: lookups use it only where
// .debug_aranges does not answer (units.go).
func (df *DwarfFile) Index() error {
	df.IndexOnce.Do(func() {
		key := df.indexKey(df.Sec.Info)
		if !df.loadIndex(key, df.Sec.Info.Size()) {
			df.buildIndex()
			if df.indexErr == nil {
				df.storeIndex(key)
			}
		}
		df.MaxHi = make([]uint64, len(df.Ranges))
		var m uint64
		for i, rg := range df.Ranges {
			m = max(m, rg.Hi)
			df.MaxHi[i] = m
		}
	})
	return df.indexErr
}

// buildIndex reads every unit's header and top DIE for its address ranges.
func (df *DwarfFile) buildIndex() {
	units, err := df.allUnits()
	df.indexErr = err
	ar := df.arangesByUnit()
	for i, u := range units {
		if u.Utype != UtCompile && u.Utype != UtPartial && u.Utype != utSkeleton {
			continue
		}
		rs := df.UnitRanges(u)
		// Only the unit's first DIE was read; its page need not stay.
		df.Obj.Release(df.Sec.Info.Upto(u.End)[u.Off:u.End])
		if len(rs) == 0 {
			rs = ar[u.Off]
		}
		for _, rg := range rs {
			if rg[1] > rg[0] {
				df.Ranges = append(df.Ranges, unitRange{Lo: rg[0], Hi: rg[1], unit: i})
			}
		}
	}
	sort.Slice(df.Ranges, func(i, j int) bool { return df.Ranges[i].Lo < df.Ranges[j].Lo })
}

// UnitRanges reads one unit's top DIE (no children) and its address ranges.
func (df *DwarfFile) UnitRanges(u UnitHeader) [][2]uint64 {
	ud, err := df.ReadUnitDIE(u, false)
	if err != nil {
		return nil
	}
	rs, ok := df.AppendRanges(nil, &ud.Attrs.Pc, &ud.Rctx)
	if !ok {
		return nil
	}
	return rs
}

// ParseAranges reads .debug_aranges (DWARF 5 §6.1.2) into ranges by unit offset.
func ParseAranges(b []byte, bo binary.ByteOrder) map[uint64][][2]uint64 {
	out := map[uint64][][2]uint64{}
	c := &cursor.Cursor{Format: ".debug_aranges", Data: b, Order: bo}
	for c.Len() > 0 && c.Err() == nil {
		length, is64 := c.UnitLength()
		if c.Err() != nil || length > uint64(c.Len()) {
			break
		}
		start := c.Off
		end := start + int(length)
		c.U16() // version
		cuOff := c.Offset(is64)
		asize := int(c.U8())
		c.U8() // segment selector size
		tuple := 2 * asize
		if asize != 4 && asize != 8 {
			c.Off = end
			continue
		}
		// Tuples start at a multiple of the tuple size from the set's start.
		hdr := c.Off - (start - 4)
		if is64 {
			hdr = c.Off - (start - 12)
		}
		if pad := (tuple - hdr%tuple) % tuple; pad > 0 {
			c.Skip(pad)
		}
		for c.Off+tuple <= end && c.Err() == nil {
			lo := c.Uint(asize)
			n := c.Uint(asize)
			if lo == 0 && n == 0 {
				break
			}
			if lo+n > lo && len(out[cuOff]) < 1<<20 {
				out[cuOff] = append(out[cuOff], [2]uint64{lo, lo + n})
			}
		}
		c.Off = end
	}
	return out
}

// UnitsFor returns the indexes of units whose ranges contain pc, in
// .debug_info order: where units overlap (a C++ function that two units
// both emitted, as unity builds do), gdb's index maps the address to the
// unit read first, the first in the section. .debug_aranges names the
// candidates where the file has it (units.go); the unit index decides
// where it does not, or names no unit that holds pc.
func (df *DwarfFile) UnitsFor(pc uint64) []int {
	if out := df.unitsByAranges(pc); len(out) > 0 {
		return out
	}
	if df.Index() != nil && len(df.Ranges) == 0 {
		return nil
	}
	i := sort.Search(len(df.Ranges), func(i int) bool { return df.Ranges[i].Lo > pc }) - 1
	var out []int
	for ; i >= 0 && df.MaxHi[i] > pc; i-- {
		if rg := df.Ranges[i]; pc < rg.Hi {
			dup := false
			for _, u := range out {
				dup = dup || u == rg.unit
			}
			if !dup {
				out = append(out, rg.unit)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Tree returns the decoded DIE tree of unit i, decoding it on first use.
func (df *DwarfFile) Tree(i int) (*UnitTree, error) {
	df.mu.Lock()
	if t, ok := df.Decoded[i]; ok {
		df.touch(i)
		df.mu.Unlock()
		return t, nil
	}
	df.mu.Unlock()
	var t *UnitTree
	var err error
	if u := df.Unit(i); u.Utype == utSkeleton || df.isGNUSkeleton(u) {
		t, err = df.decodeSkeleton(i)
	} else {
		t, err = DecodeUnit(df, u)
	}
	if err != nil {
		return nil, err
	}
	df.mu.Lock()
	if prev, ok := df.Decoded[i]; ok {
		t = prev
	} else {
		df.Decoded[i] = t
		df.lru = append(df.lru, i)
		df.decodedDIEs += len(t.Dies)
		df.evict()
	}
	df.mu.Unlock()
	return t, nil
}

// maxCachedDIEs bounds the DIEs of the decoded units one file keeps
// (about 40 MB); a single larger unit is still kept while it is in use.
const maxCachedDIEs = 1 << 18

// touch marks unit i most recently used. df.mu is held.
func (df *DwarfFile) touch(i int) {
	for k := len(df.lru) - 1; k >= 0; k-- {
		if df.lru[k] == i {
			copy(df.lru[k:], df.lru[k+1:])
			df.lru[len(df.lru)-1] = i
			return
		}
	}
}

// evict drops least recently used units until the cache fits its budget,
// keeping the newest. Callers that hold a dropped tree keep using it; it is
// decoded again on its next lookup. df.mu is held.
func (df *DwarfFile) evict() {
	for df.decodedDIEs > maxCachedDIEs && len(df.lru) > 1 {
		old := df.lru[0]
		df.lru = df.lru[1:]
		df.decodedDIEs -= len(df.Decoded[old].Dies)
		delete(df.Decoded, old)
	}
}
