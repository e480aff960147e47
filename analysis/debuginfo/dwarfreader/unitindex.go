package dwarfreader

import (
	"encoding/binary"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// The unit address index in the index cache. Building it reads the header
// and top DIE of every unit of .debug_info — for libc6-dbg's 1,700 units,
// each with its own abbreviation table, most of the time a small core
// costs. The result depends only on the file, so it is stored under the
// file's build-id and read back by later processes.
//
// Payload (little-endian): u32 format, u32 unit count, u32 range count,
// then per unit off, dieOff, end, dwoID, abbrevOff (u64 each), vers (u16),
// utype, is64, asize (u8 each), one pad byte; then per range lo, hi (u64)
// and unit (u32).

const (
	unitIndexFormat = 1
	unitRecord      = 5*8 + 2 + 4
	rangeRecord     = 2*8 + 4
)

// indexKey names the file's unit index: build-id and the SHA-256 of the
// sections it is read from (DerivedKey: .debug_info, .debug_abbrev and
// the range and address sections its top DIEs use); "" when no cache is in
// use or the file has no build-id.
func (df *DwarfFile) indexKey(info *object.Lazy) string {
	if object.IndexCache() == nil || info.Size() == 0 {
		return ""
	}
	return df.Obj.DerivedKey(".unitindex", ".debug_info", ".debug_abbrev", ".debug_ranges", ".debug_rnglists", ".debug_addr")
}

// loadIndex reads the index stored under key, checking every record
// against .debug_info's size; false when there is none or it does not fit.
func (df *DwarfFile) loadIndex(key string, infoSize uint64) bool {
	if key == "" {
		return false
	}
	e := object.IndexCache().Get(key)
	if e == nil {
		return false
	}
	defer e.Close()
	b := e.Data
	le := binary.LittleEndian
	if len(b) < 12 || le.Uint32(b) != unitIndexFormat {
		return false
	}
	nu, nr := uint64(le.Uint32(b[4:])), uint64(le.Uint32(b[8:]))
	if nu > maxUnits || 12+nu*unitRecord+nr*rangeRecord != uint64(len(b)) {
		return false
	}
	units := make([]UnitHeader, nu)
	p := b[12:]
	for i := range units {
		u := &units[i]
		u.Off, u.DieOff, u.End = le.Uint64(p), le.Uint64(p[8:]), le.Uint64(p[16:])
		u.dwoID, u.abbrevOff = le.Uint64(p[24:]), le.Uint64(p[32:])
		u.Vers, u.Utype, u.is64, u.Asize = int(le.Uint16(p[40:])), p[42], p[43] != 0, int(p[44])
		if u.Off > u.DieOff || u.DieOff > u.End || u.End > infoSize {
			return false
		}
		p = p[unitRecord:]
	}
	ranges := make([]unitRange, nr)
	for i := range ranges {
		r := &ranges[i]
		r.Lo, r.Hi, r.unit = le.Uint64(p), le.Uint64(p[8:]), int(le.Uint32(p[16:]))
		if r.unit >= len(units) || r.Hi <= r.Lo || (i > 0 && r.Lo < ranges[i-1].Lo) {
			return false
		}
		p = p[rangeRecord:]
	}
	df.setUnits(units)
	df.Ranges = ranges
	return true
}

// storeIndex stores the built index under key.
func (df *DwarfFile) storeIndex(key string) {
	units, _ := df.allUnits()
	if key == "" || len(units) > maxUnits {
		return
	}
	le := binary.LittleEndian
	b := make([]byte, 12, 12+len(units)*unitRecord+len(df.Ranges)*rangeRecord)
	le.PutUint32(b, unitIndexFormat)
	le.PutUint32(b[4:], uint32(len(units)))
	le.PutUint32(b[8:], uint32(len(df.Ranges)))
	var rec [unitRecord]byte
	for _, u := range units {
		le.PutUint64(rec[0:], u.Off)
		le.PutUint64(rec[8:], u.DieOff)
		le.PutUint64(rec[16:], u.End)
		le.PutUint64(rec[24:], u.dwoID)
		le.PutUint64(rec[32:], u.abbrevOff)
		le.PutUint16(rec[40:], uint16(u.Vers))
		rec[42], rec[43], rec[44] = u.Utype, b2u8(u.is64), uint8(u.Asize)
		b = append(b, rec[:]...)
	}
	var rr [rangeRecord]byte
	for _, r := range df.Ranges {
		le.PutUint64(rr[0:], r.Lo)
		le.PutUint64(rr[8:], r.Hi)
		le.PutUint32(rr[16:], uint32(r.unit))
		b = append(b, rr[:]...)
	}
	object.IndexCache().Put(key, b)
}

func b2u8(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}
