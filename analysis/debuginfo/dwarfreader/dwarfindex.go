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

// DwarfFile is the DWARF of one debug file, decoded lazily: the unit index
// (address ranges of every unit's top DIE) at first use, the DIE tree and
// line table of a unit only when a looked-up pc falls in it.
type DwarfFile struct {
	Obj  *object.Object
	Bo   binary.ByteOrder
	Line []byte
	Strs dwarfline.LineStrings
	Sec  DwarfSections

	abbrevCache map[abbrevKey]*abbrevTable // guarded by mu

	IndexOnce sync.Once
	Units     []UnitHeader
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
// addresses and ranges from (nil where absent).
type DwarfSections struct {
	Info, Abbrev, Str, LineStr, StrOffsets, Addr, Ranges, Rnglists []byte
}

type unitRange struct {
	Lo, Hi uint64
	unit   int
}

// Unit types (DWARF 5 §7.5.1).
const (
	UtCompile  = 0x01
	utType     = 0x02
	UtPartial  = 0x03
	utSkeleton = 0x04
	utSplitCU  = 0x05
	utSplitTU  = 0x06
)

// OpenDWARF finds the object's (mapped or decompressed) DWARF sections.
// Nothing is read until a lookup needs it.
func OpenDWARF(o *object.Object) (*DwarfFile, error) {
	sec := func(name string) []byte {
		d, _, _ := o.Section(name)
		return d
	}
	info := sec(".debug_info")
	if info == nil {
		return nil, nil
	}
	if units, err := ParseUnitHeaders(info, o.Elf.ByteOrder); len(units) == 0 && err != nil {
		return nil, fmt.Errorf("%s: %w", o.Path(), err)
	}
	return &DwarfFile{
		Obj:  o,
		Bo:   o.Elf.ByteOrder,
		Line: sec(".debug_line"),
		Strs: dwarfline.LineStrings{LineStr: sec(".debug_line_str"), Str: sec(".debug_str"), StrOffsets: sec(".debug_str_offsets")},
		Sec: DwarfSections{Info: info, Abbrev: sec(".debug_abbrev"), Str: sec(".debug_str"), LineStr: sec(".debug_line_str"),
			StrOffsets: sec(".debug_str_offsets"), Addr: sec(".debug_addr"), Ranges: sec(".debug_ranges"), Rnglists: sec(".debug_rnglists")},
		Decoded: map[int]*UnitTree{},
	}, nil
}

// ParseUnitHeaders walks .debug_info unit headers without reading DIEs.
func ParseUnitHeaders(info []byte, bo binary.ByteOrder) ([]UnitHeader, error) {
	c := &cursor.Cursor{Format: ".debug_info", Data: info, Order: bo}
	var units []UnitHeader
	for c.Len() > 0 && c.Err() == nil {
		if len(units) >= maxUnits {
			return units, &object.FormatError{Format: ".debug_info", Off: int64(c.Pos()), Msg: "too many units"}
		}
		u := UnitHeader{Off: c.Pos()}
		length, is64 := c.UnitLength()
		if c.Err() != nil {
			break
		}
		start := c.Off
		if length > uint64(c.Len()) {
			return units, &object.FormatError{Format: ".debug_info", Off: int64(u.Off), Msg: "unit runs past the section"}
		}
		u.End = uint64(start) + length
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
		if c.Err() != nil {
			break
		}
		units = append(units, u)
		c.Off = int(u.End)
	}
	return units, c.Err()
}

// Index builds the unit address index once, or maps it from the index
// cache (unitindex.go) when an earlier process built it for this file.
func (df *DwarfFile) Index() error {
	df.IndexOnce.Do(func() {
		info, _, _ := df.Obj.Section(".debug_info")
		key := df.indexKey(info)
		if !df.loadIndex(key, info) {
			df.buildIndex(info)
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
func (df *DwarfFile) buildIndex(info []byte) {
	df.Units, df.indexErr = ParseUnitHeaders(info, df.Bo)
	var ar map[uint64][][2]uint64
	if b, _, ok := df.Obj.Section(".debug_aranges"); ok {
		ar = ParseAranges(b, df.Bo)
	}
	for i, u := range df.Units {
		if u.Utype != UtCompile && u.Utype != UtPartial && u.Utype != utSkeleton {
			continue
		}
		rs := df.UnitRanges(u)
		// Only the unit's first DIE was read; its page need not stay.
		df.Obj.Release(info[u.Off:u.End])
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
// unit read first, the first in the section.
func (df *DwarfFile) UnitsFor(pc uint64) []int {
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
	if df.Units[i].Utype == utSkeleton || df.isGNUSkeleton(df.Units[i]) {
		t, err = df.decodeSkeleton(i)
	} else {
		t, err = DecodeUnit(df, df.Units[i])
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

// UnitOf returns the index of the unit containing .debug_info offset off.
func (df *DwarfFile) UnitOf(off uint64) (int, bool) {
	if df.Index(); len(df.Units) == 0 {
		return 0, false
	}
	i := sort.Search(len(df.Units), func(i int) bool { return df.Units[i].End > off })
	if i < len(df.Units) && df.Units[i].DieOff <= off {
		return i, true
	}
	return 0, false
}
