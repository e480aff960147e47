package dwpindex

import (
	"encoding/binary"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// Split DWARF packages (.dwp, DWARF 5 §7.3.5): the .dwo files of a program
// merged into one object whose .debug_*.dwo sections concatenate the
// units' contributions. .debug_cu_index (and .debug_tu_index for type
// units) maps a unit's DWO id to its contribution in each section, by
// §7.3.5.3:
//
//	header      version (uhalf 5, or uword 2 for the GNU pre-standard
//	            format of DWARF 4 split DWARF), padding (uhalf),
//	            section_count, unit_count, slot_count (uword each)
//	hash table  slot_count 8-byte signatures, then slot_count 4-byte row
//	            indexes (1-based; 0 marks an empty slot)
//	offsets     a row of section_count DW_SECT ids, then unit_count rows
//	            of section_count 4-byte contribution offsets
//	sizes       unit_count rows of section_count 4-byte contribution sizes

// DW_SECT identifiers, the columns of a package index (DWARF 5 §7.3.5.3,
// table 7.1). The GNU version 2 format uses the same numbers for the
// sections both have (2 is .debug_types there, 5 .debug_loc).
const (
	DwSectInfo       = 1
	DwSectAbbrev     = 3
	dwSectLine       = 4
	DwSectLoclists   = 5
	DwSectStrOffsets = 6
	dwSectMacro      = 7
	DwSectRnglists   = 8

	MaxDWSect = 8
)

// dwpIndexHeaderSize is the size of a package index header.
const dwpIndexHeaderSize = 16

// DwpIndex is a parsed .debug_cu_index or .debug_tu_index. Its tables are
// views of the section, validated to lie inside it.
type DwpIndex struct {
	version int
	bo      binary.ByteOrder
	nslots  uint32
	Nunits  uint32
	column  [MaxDWSect + 1]int // column of each DW_SECT id, -1 if absent
	ncols   uint32
	sigs    []byte // nslots 8-byte signatures
	rows    []byte // nslots 4-byte row indexes
	offsets []byte // nunits rows of ncols 4-byte offsets
	sizes   []byte // nunits rows of ncols 4-byte sizes
}

// dwpContribution is one unit's part of a package section.
type dwpContribution struct {
	off, size uint64
}

// ParseDWPIndex reads a package index section. Every table is checked to
// fit in b before it is used; nothing is allocated beyond the index itself.
func ParseDWPIndex(b []byte, bo binary.ByteOrder) (*DwpIndex, error) {
	fail := func(msg string) error {
		return &object.FormatError{Format: ".debug_cu_index", Msg: msg}
	}
	if len(b) < dwpIndexHeaderSize {
		return nil, fail("index shorter than its header")
	}
	x := &DwpIndex{bo: bo}
	// Version 5 is a uhalf followed by a zero uhalf; GNU version 2 a uword.
	switch v := bo.Uint32(b); {
	case v == 2:
		x.version = 2
	case bo.Uint16(b) == 5:
		x.version = 5
	default:
		return nil, fail(fmt.Sprintf("unsupported index version %#x", v))
	}
	x.ncols = bo.Uint32(b[4:])
	x.Nunits = bo.Uint32(b[8:])
	x.nslots = bo.Uint32(b[12:])
	if x.nslots == 0 {
		if x.Nunits != 0 {
			return nil, fail("units without hash slots")
		}
		return x, nil
	}
	// slot_count is a power of two at least 3/2 of unit_count (§7.3.5.3);
	// the probe sequence relies on the former.
	if x.nslots&(x.nslots-1) != 0 {
		return nil, fail(fmt.Sprintf("slot count %d is not a power of two", x.nslots))
	}
	if x.Nunits > x.nslots {
		return nil, fail(fmt.Sprintf("%d units in %d slots", x.Nunits, x.nslots))
	}
	if x.ncols == 0 || x.ncols > 64 {
		return nil, fail(fmt.Sprintf("implausible section count %d", x.ncols))
	}
	// Sizes in uint64: 12*2^32 and 8*2^32*64 do not overflow.
	hashSize := 12 * uint64(x.nslots)
	rowSize := 4 * uint64(x.ncols)
	need := dwpIndexHeaderSize + hashSize + rowSize + 2*rowSize*uint64(x.Nunits)
	if need > uint64(len(b)) {
		return nil, fail(fmt.Sprintf("tables need %d bytes, index has %d", need, len(b)))
	}
	p := uint64(dwpIndexHeaderSize)
	take := func(n uint64) []byte {
		s := b[p : p+n]
		p += n
		return s
	}
	x.sigs = take(8 * uint64(x.nslots))
	x.rows = take(4 * uint64(x.nslots))
	ids := take(rowSize)
	x.offsets = take(rowSize * uint64(x.Nunits))
	x.sizes = take(rowSize * uint64(x.Nunits))
	for i := range x.column {
		x.column[i] = -1
	}
	for c := range int(x.ncols) {
		id := bo.Uint32(ids[4*c:])
		if id == 0 || id > MaxDWSect {
			continue // unknown sections are skipped, as §7.3.5.3 allows vendors
		}
		if x.column[id] >= 0 {
			return nil, fail(fmt.Sprintf("section id %d in two columns", id))
		}
		x.column[id] = c
	}
	return x, nil
}

// Lookup returns the 1-based row of the unit with DWO id sig, probing the
// hash table as §7.3.5.3 describes: start at sig's low bits, step by its
// next 32 bits made odd, stop at an empty slot. At most nslots probes.
func (x *DwpIndex) Lookup(sig uint64) (row uint32, ok bool) {
	if x == nil || x.nslots == 0 {
		return 0, false
	}
	mask := uint64(x.nslots - 1)
	h := sig & mask
	step := (sig>>32)&mask | 1
	for range x.nslots {
		r := x.bo.Uint32(x.rows[4*h:])
		if r == 0 {
			return 0, false
		}
		if x.bo.Uint64(x.sigs[8*h:]) == sig {
			if r > x.Nunits {
				return 0, false
			}
			return r, true
		}
		h = (h + step) & mask
	}
	return 0, false
}

// Contribution returns row's contribution to the section with DW_SECT id
// sect; ok is false when the package has no such column.
func (x *DwpIndex) Contribution(row uint32, sect int) (dwpContribution, bool) {
	if x == nil || row == 0 || row > x.Nunits || sect <= 0 || sect > MaxDWSect || x.column[sect] < 0 {
		return dwpContribution{}, false
	}
	at := (uint64(row-1)*uint64(x.ncols) + uint64(x.column[sect])) * 4
	return dwpContribution{
		off:  uint64(x.bo.Uint32(x.offsets[at:])),
		size: uint64(x.bo.Uint32(x.sizes[at:])),
	}, true
}

// Slice returns c's bytes of sec, nil if they do not lie inside it.
func (c dwpContribution) Slice(sec []byte) []byte {
	if c.off > uint64(len(sec)) || c.size > uint64(len(sec))-c.off {
		return nil
	}
	return sec[c.off : c.off+c.size : c.off+c.size]
}
