package debuginfo

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// maxUnits caps the number of compilation units indexed in one file.
const maxUnits = 1 << 22

// dwarfFile is the DWARF of one debug file, decoded lazily: the unit index
// (address ranges of every unit's top DIE) at first use, the DIE tree and
// line table of a unit only when a looked-up pc falls in it.
type dwarfFile struct {
	obj  *Object
	bo   binary.ByteOrder
	line []byte
	strs lineStrings
	sec  dwarfSections

	abbrevCache map[abbrevKey]*abbrevTable // guarded by mu

	indexOnce sync.Once
	units     []unitHeader
	ranges    []unitRange // sorted by lo
	maxHi     []uint64    // maxHi[i] = max(ranges[0..i].hi)
	indexErr  error

	mu      sync.Mutex
	decoded map[int]*unitTree
	// lru lists decoded units, most recently used last; decodedDIEs counts
	// their DIEs. Units past maxCachedDIEs are dropped oldest first, so
	// memory follows the units in use, not every unit a core ever touched.
	lru         []int
	decodedDIEs int

	dwo *dwoSearch // where split units' .dwo files are (splitdwarf.go)
}

// unitHeader is where one unit of .debug_info lies (DWARF 5 §7.5.1).
type unitHeader struct {
	off    uint64 // offset of the unit header
	dieOff uint64 // offset of the first DIE
	end    uint64
	vers   int
	utype  uint8
	is64   bool
	asize  int
	dwoID  uint64 // skeleton and split units (DWARF 5)

	abbrevOff uint64 // debug_abbrev_offset
}

// dwarfSections are the sections decodeUnit reads DIEs and their strings,
// addresses and ranges from (nil where absent).
type dwarfSections struct {
	info, abbrev, str, lineStr, strOffsets, addr, ranges, rnglists []byte
}

type unitRange struct {
	lo, hi uint64
	unit   int
}

// Unit types (DWARF 5 §7.5.1).
const (
	utCompile  = 0x01
	utType     = 0x02
	utPartial  = 0x03
	utSkeleton = 0x04
	utSplitCU  = 0x05
	utSplitTU  = 0x06
)

// openDWARF finds the object's (mapped or decompressed) DWARF sections.
// Nothing is read until a lookup needs it.
func openDWARF(o *Object) (*dwarfFile, error) {
	sec := func(name string) []byte {
		d, _, _ := o.Section(name)
		return d
	}
	info := sec(".debug_info")
	if info == nil {
		return nil, nil
	}
	if units, err := parseUnitHeaders(info, o.elf.ByteOrder); len(units) == 0 && err != nil {
		return nil, fmt.Errorf("%s: %w", o.path, err)
	}
	return &dwarfFile{
		obj:  o,
		bo:   o.elf.ByteOrder,
		line: sec(".debug_line"),
		strs: lineStrings{lineStr: sec(".debug_line_str"), str: sec(".debug_str"), strOffsets: sec(".debug_str_offsets")},
		sec: dwarfSections{info: info, abbrev: sec(".debug_abbrev"), str: sec(".debug_str"), lineStr: sec(".debug_line_str"),
			strOffsets: sec(".debug_str_offsets"), addr: sec(".debug_addr"), ranges: sec(".debug_ranges"), rnglists: sec(".debug_rnglists")},
		decoded: map[int]*unitTree{},
	}, nil
}

// parseUnitHeaders walks .debug_info unit headers without reading DIEs.
func parseUnitHeaders(info []byte, bo binary.ByteOrder) ([]unitHeader, error) {
	c := &cursor.Cursor{Format: ".debug_info", Data: info, Order: bo}
	var units []unitHeader
	for c.Len() > 0 && c.Err() == nil {
		if len(units) >= maxUnits {
			return units, &FormatError{Format: ".debug_info", Off: int64(c.Pos()), Msg: "too many units"}
		}
		u := unitHeader{off: c.Pos()}
		length, is64 := c.UnitLength()
		if c.Err() != nil {
			break
		}
		start := c.Off
		if length > uint64(c.Len()) {
			return units, &FormatError{Format: ".debug_info", Off: int64(u.off), Msg: "unit runs past the section"}
		}
		u.end = uint64(start) + length
		u.is64 = is64
		u.vers = int(c.U16())
		switch {
		case u.vers == 5:
			u.utype = c.U8()
			u.asize = int(c.U8())
			u.abbrevOff = c.Offset(is64)
			switch u.utype {
			case utSkeleton, utSplitCU:
				u.dwoID = c.U64()
			case utType, utSplitTU:
				c.U64() // type_signature
				c.Offset(is64)
			}
		case u.vers >= 2 && u.vers <= 4:
			u.utype = utCompile
			u.abbrevOff = c.Offset(is64)
			u.asize = int(c.U8())
		default:
			u.utype = 0 // unknown version: skipped
		}
		u.dieOff = c.Pos()
		if c.Err() != nil {
			break
		}
		units = append(units, u)
		c.Off = int(u.end)
	}
	return units, c.Err()
}

// index builds the unit address index once, or maps it from the index
// cache (unitindex.go) when an earlier process built it for this file.
func (df *dwarfFile) index() error {
	df.indexOnce.Do(func() {
		info, _, _ := df.obj.Section(".debug_info")
		key := df.indexKey(info)
		if !df.loadIndex(key, info) {
			df.buildIndex(info)
			if df.indexErr == nil {
				df.storeIndex(key)
			}
		}
		df.maxHi = make([]uint64, len(df.ranges))
		var m uint64
		for i, rg := range df.ranges {
			m = max(m, rg.hi)
			df.maxHi[i] = m
		}
	})
	return df.indexErr
}

// buildIndex reads every unit's header and top DIE for its address ranges.
func (df *dwarfFile) buildIndex(info []byte) {
	df.units, df.indexErr = parseUnitHeaders(info, df.bo)
	var ar map[uint64][][2]uint64
	if b, _, ok := df.obj.Section(".debug_aranges"); ok {
		ar = parseAranges(b, df.bo)
	}
	for i, u := range df.units {
		if u.utype != utCompile && u.utype != utPartial && u.utype != utSkeleton {
			continue
		}
		rs := df.unitRanges(u)
		// Only the unit's first DIE was read; its page need not stay.
		df.obj.release(info[u.off:u.end])
		if len(rs) == 0 {
			rs = ar[u.off]
		}
		for _, rg := range rs {
			if rg[1] > rg[0] {
				df.ranges = append(df.ranges, unitRange{lo: rg[0], hi: rg[1], unit: i})
			}
		}
	}
	sort.Slice(df.ranges, func(i, j int) bool { return df.ranges[i].lo < df.ranges[j].lo })
}

// unitRanges reads one unit's top DIE (no children) and its address ranges.
func (df *dwarfFile) unitRanges(u unitHeader) [][2]uint64 {
	ud, err := df.readUnitDIE(u, false)
	if err != nil {
		return nil
	}
	rs, ok := df.appendRanges(nil, &ud.attrs.pc, &ud.rctx)
	if !ok {
		return nil
	}
	return rs
}

// parseAranges reads .debug_aranges (DWARF 5 §6.1.2) into ranges by unit offset.
func parseAranges(b []byte, bo binary.ByteOrder) map[uint64][][2]uint64 {
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

// unitsFor returns the indexes of units whose ranges contain pc, in
// .debug_info order: where units overlap (a C++ function that two units
// both emitted, as unity builds do), gdb's index maps the address to the
// unit read first, the first in the section.
func (df *dwarfFile) unitsFor(pc uint64) []int {
	if df.index() != nil && len(df.ranges) == 0 {
		return nil
	}
	i := sort.Search(len(df.ranges), func(i int) bool { return df.ranges[i].lo > pc }) - 1
	var out []int
	for ; i >= 0 && df.maxHi[i] > pc; i-- {
		if rg := df.ranges[i]; pc < rg.hi {
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

// tree returns the decoded DIE tree of unit i, decoding it on first use.
func (df *dwarfFile) tree(i int) (*unitTree, error) {
	df.mu.Lock()
	if t, ok := df.decoded[i]; ok {
		df.touch(i)
		df.mu.Unlock()
		return t, nil
	}
	df.mu.Unlock()
	var t *unitTree
	var err error
	if df.units[i].utype == utSkeleton {
		t, err = df.decodeSkeleton(i)
	} else {
		t, err = decodeUnit(df, df.units[i])
	}
	if err != nil {
		return nil, err
	}
	df.mu.Lock()
	if prev, ok := df.decoded[i]; ok {
		t = prev
	} else {
		df.decoded[i] = t
		df.lru = append(df.lru, i)
		df.decodedDIEs += len(t.dies)
		df.evict()
	}
	df.mu.Unlock()
	return t, nil
}

// maxCachedDIEs bounds the DIEs of the decoded units one file keeps
// (about 40 MB); a single larger unit is still kept while it is in use.
const maxCachedDIEs = 1 << 18

// touch marks unit i most recently used. df.mu is held.
func (df *dwarfFile) touch(i int) {
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
func (df *dwarfFile) evict() {
	for df.decodedDIEs > maxCachedDIEs && len(df.lru) > 1 {
		old := df.lru[0]
		df.lru = df.lru[1:]
		df.decodedDIEs -= len(df.decoded[old].dies)
		delete(df.decoded, old)
	}
}

// unitOf returns the index of the unit containing .debug_info offset off.
func (df *dwarfFile) unitOf(off uint64) (int, bool) {
	if df.index(); len(df.units) == 0 {
		return 0, false
	}
	i := sort.Search(len(df.units), func(i int) bool { return df.units[i].end > off })
	if i < len(df.units) && df.units[i].dieOff <= off {
		return i, true
	}
	return 0, false
}
