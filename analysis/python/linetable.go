package python

// lineAt returns the source line of the instruction at code-unit index
// addrq, from a code object's co_linetable in the location table format of
// CPython 3.11 and later (Objects/locations.md: one entry per run of code
// units; the first byte is 1ccccLLL, c the entry's kind, L+1 its length in
// code units). It returns 0 when the table has no line for addrq or is
// damaged.
func lineAt(table []byte, firstLine int, addrq int) int {
	line, addr := firstLine, 0
	r := locationReader{b: table}
	for r.i < len(r.b) {
		head := r.b[r.i]
		r.i++
		if head&0x80 == 0 {
			return 0 // not an entry start: damaged table
		}
		kind, length := int(head>>3&15), int(head&7)+1
		noLocation := false
		switch {
		case kind == 15: // PY_CODE_LOCATION_INFO_NONE
			noLocation = true
		case kind == 14: // PY_CODE_LOCATION_INFO_LONG: line delta, end line, column, end column
			line += r.svarint()
			r.varint()
			r.varint()
			r.varint()
		case kind == 13: // PY_CODE_LOCATION_INFO_NO_COLUMNS
			line += r.svarint()
		case kind >= 10: // PY_CODE_LOCATION_INFO_ONE_LINE0..2: the delta is kind-10
			line += kind - 10
			r.i += 2 // column, end column
		default: // PY_CODE_LOCATION_INFO_SHORT0..9: same line, one column byte
			r.i++
		}
		if r.bad {
			return 0
		}
		if addrq >= addr && addrq < addr+length {
			if noLocation || line < 0 {
				return 0
			}
			return line
		}
		addr += length
	}
	return 0
}

// locationReader reads the varints of a location table.
type locationReader struct {
	b   []byte
	i   int
	bad bool
}

// varint reads an unsigned varint: 6-bit groups, least significant first,
// bit 6 set on every group but the last.
func (r *locationReader) varint() int {
	v, shift := 0, 0
	for {
		if r.i >= len(r.b) || shift > 30 {
			r.bad = true
			return 0
		}
		c := r.b[r.i]
		r.i++
		v |= int(c&63) << shift
		if c&64 == 0 {
			return v
		}
		shift += 6
	}
}

// svarint reads a signed varint: the sign is the lowest bit.
func (r *locationReader) svarint() int {
	u := r.varint()
	if u&1 != 0 {
		return -(u >> 1)
	}
	return u >> 1
}
