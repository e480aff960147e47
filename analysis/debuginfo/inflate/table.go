package inflate

import "sync"

// Huffman decoding tables (RFC 1951 §3.2.2, §3.2.5). A table is indexed by
// the next mainBits bits of the stream (codes are packed most significant
// bit first, so a code's table index is its bit-reversed value); a code
// longer than mainBits points to a subtable indexed by the bits after
// them. Each entry is a uint32:
//
//	bits 0-4   bits the entry consumes (a pointer: mainBits)
//	bits 5-7   kind (kBad for unassigned codes: a zeroed table is all bad)
//	bits 8-11  extra bits after the code (lengths, distances); a pointer's
//	           subtable index bits
//	bits 16-31 literal byte, length or distance base, or subtable offset
type table struct {
	main     [1 << litMainBits]uint32 // indexed by the next mainBits bits
	sub      []uint32                 // subtables
	mainBits uint
}

const (
	kBad = iota
	kLit
	kLen
	kEnd
	kSub
	kDist
)

const (
	litMainBits  = 11
	distMainBits = 8
	maxCodeLen   = 15
)

func entry(n uint, kind int, extra uint, value uint32) uint32 {
	return uint32(n) | uint32(kind)<<5 | uint32(extra)<<8 | value<<16
}

// Length and distance bases and extra bits (RFC 1951 §3.2.5).
var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// litSymbol is what literal/length symbol sym decodes to.
func litSymbol(sym int) (kind int, extra uint, value uint32) {
	switch {
	case sym < 256:
		return kLit, 0, uint32(sym)
	case sym == 256:
		return kEnd, 0, 0
	case sym-257 < len(lengthBase):
		return kLen, uint(lengthExtra[sym-257]), uint32(lengthBase[sym-257])
	}
	return kBad, 0, 0 // 286 and 287 take part in the code but never occur
}

// distSymbol is what distance symbol sym decodes to.
func distSymbol(sym int) (kind int, extra uint, value uint32) {
	if sym < len(distBase) {
		return kDist, uint(distExtra[sym]), uint32(distBase[sym])
	}
	return kBad, 0, 0
}

// codeLenSymbol is what a code length code decodes to (§3.2.7): the
// symbol itself, as a literal.
func codeLenSymbol(sym int) (int, uint, uint32) { return kLit, 0, uint32(sym) }

// build fills t with the canonical code of the code lengths lens (§3.2.2),
// reusing t's storage. An over-subscribed set of lengths is an error; an
// incomplete one leaves its unused codes kBad, which decoding reports.
func (t *table) build(lens []uint8, mainBits uint, sym func(int) (int, uint, uint32)) bool {
	var count [maxCodeLen + 1]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	left := 1
	for l := 1; l <= maxCodeLen; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false
		}
	}
	var next [maxCodeLen + 2]int
	code := 0
	for l := 1; l <= maxCodeLen; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	// Subtable sizes: per main index, the longest code sharing it.
	mainSize := 1 << mainBits
	var codes [320]uint16
	var sub [1 << litMainBits]uint8
	for s, l := range lens {
		if l == 0 {
			continue
		}
		codes[s] = reverse(uint16(next[l]), uint(l))
		next[l]++
		if uint(l) > mainBits {
			p := codes[s] & uint16(mainSize-1)
			sub[p] = max(sub[p], l-uint8(mainBits))
		}
	}
	t.mainBits = mainBits
	clear(t.main[:mainSize])
	size := 0
	for p := 0; p < mainSize; p++ {
		if sub[p] > 0 {
			t.main[p] = entry(mainBits, kSub, uint(sub[p]), uint32(size))
			size += 1 << sub[p]
		}
	}
	if cap(t.sub) < size {
		t.sub = make([]uint32, size)
	}
	t.sub = t.sub[:size]
	clear(t.sub)
	for s, l := range lens {
		if l == 0 {
			continue
		}
		kind, extra, value := sym(s)
		r := int(codes[s])
		if uint(l) <= mainBits {
			e := entry(uint(l), kind, extra, value)
			for i := r; i < mainSize; i += 1 << l {
				t.main[i] = e
			}
			continue
		}
		ptr := t.main[r&(mainSize-1)]
		off, subBits, n := int(ptr>>16), uint(ptr>>8&15), uint(l)-mainBits
		e := entry(n, kind, extra, value)
		for i := r >> mainBits; i < 1<<subBits; i += 1 << n {
			t.sub[off+i] = e
		}
	}
	return true
}

// reverse reverses the low n bits of c.
func reverse(c uint16, n uint) uint16 {
	var r uint16
	for i := uint(0); i < n; i++ {
		r = r<<1 | c&1
		c >>= 1
	}
	return r
}

var fixed struct {
	once      sync.Once
	lit, dist table
}

// fixedTables are the fixed Huffman codes of BTYPE 01 (§3.2.6).
func fixedTables() (*table, *table) {
	fixed.once.Do(func() {
		var lens [288]uint8
		for i := range lens {
			switch {
			case i < 144:
				lens[i] = 8
			case i < 256:
				lens[i] = 9
			case i < 280:
				lens[i] = 7
			default:
				lens[i] = 8
			}
		}
		fixed.lit.build(lens[:], litMainBits, litSymbol)
		var dl [30]uint8
		for i := range dl {
			dl[i] = 5
		}
		fixed.dist.build(dl[:], distMainBits, distSymbol)
	})
	return &fixed.lit, &fixed.dist
}
