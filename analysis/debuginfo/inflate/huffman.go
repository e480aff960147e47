package inflate

// dynamicHeader reads a dynamic block's code lengths (RFC 1951 §3.2.7):
// HLIT, HDIST, HCLEN, the code length code's lengths in their fixed order,
// then the literal/length and distance code lengths, run-length coded.
func (d *Decoder) dynamicHeader() error {
	h, err := d.getBits(14)
	if err != nil {
		return err
	}
	nlit, ndist, nclen := int(h&31)+257, int(h>>5&31)+1, int(h>>10)+4
	if nlit > 286 || ndist > 30 {
		return &Error{d.pos, "too many length or distance codes"}
	}
	var clens [19]uint8
	for i := 0; i < nclen; i++ {
		v, err := d.getBits(3)
		if err != nil {
			return err
		}
		clens[codeLenOrder[i]] = uint8(v)
	}
	if !d.clen.build(clens[:], 7, codeLenSymbol) {
		return &Error{d.pos, "bad code length code"}
	}
	var lens [286 + 30]uint8
	if err := d.codeLengths(lens[:nlit+ndist]); err != nil {
		return err
	}
	if lens[256] == 0 {
		return &Error{d.pos, "no end-of-block code"}
	}
	if !d.dynLit.build(lens[:nlit], litMainBits, litSymbol) || !d.dynDst.build(lens[nlit:nlit+ndist], distMainBits, distSymbol) {
		return &Error{d.pos, "over-subscribed Huffman code"}
	}
	d.lit, d.dist = &d.dynLit, &d.dynDst
	return nil
}

// codeLenOrder is the order of the code length code's lengths (§3.2.7).
var codeLenOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// codeLengths decodes the run-length coded code lengths into lens.
func (d *Decoder) codeLengths(lens []uint8) error {
	for i := 0; i < len(lens); {
		sym, err := d.decodeSlow(&d.clen)
		if err != nil {
			return err
		}
		var rep int
		var v uint8
		switch {
		case sym < 16:
			lens[i] = uint8(sym)
			i++
			continue
		case sym == 16:
			if i == 0 {
				return &Error{d.pos, "repeat with no previous length"}
			}
			n, err := d.getBits(2)
			rep, v = int(n)+3, lens[i-1]
			if err != nil {
				return err
			}
		case sym == 17:
			n, err := d.getBits(3)
			rep = int(n) + 3
			if err != nil {
				return err
			}
		default:
			n, err := d.getBits(7)
			rep = int(n) + 11
			if err != nil {
				return err
			}
		}
		if i+rep > len(lens) {
			return &Error{d.pos, "code lengths run past their count"}
		}
		for ; rep > 0; rep-- {
			lens[i] = v
			i++
		}
	}
	return nil
}

// decodeSlow decodes one symbol of t a byte of input at a time.
func (d *Decoder) decodeSlow(t *table) (int, error) {
	d.refill()
	e := t.main[d.bits&(1<<t.mainBits-1)&(1<<litMainBits-1)]
	if e>>5&7 == kSub {
		if d.nb < t.mainBits {
			return 0, &Error{d.pos, "unexpected end of stream"}
		}
		d.bits >>= t.mainBits
		d.nb -= t.mainBits
		e = t.sub[int(e>>16)+int(d.bits&(1<<(e>>8&15)-1))]
	}
	n := uint(e & 31)
	if e>>5&7 == kBad || n == 0 {
		return 0, &Error{d.pos, "invalid Huffman code"}
	}
	if d.nb < n {
		return 0, &Error{d.pos, "unexpected end of stream"}
	}
	d.bits >>= n
	d.nb -= n
	return int(e >> 16), nil
}

// huffman decodes a Huffman-coded block's symbols until target bytes are
// out or the block ends (§3.2.5). The state lives in locals while it runs.
func (d *Decoder) huffman(target int) error {
	in, out := d.in, d.out
	s := bitState{d.pos, d.bits, d.nb}
	n := d.n
	lit, lsub, lmain := &d.lit.main, d.lit.sub, d.lit.mainBits
	var err error
	for n < target {
		if s.nb < 48 {
			s.refill(in)
		}
		e := lit[s.bits&(1<<litMainBits-1)]
		if e>>5&7 == kSub {
			if s.nb < lmain {
				err = errEOF(s.pos)
				break
			}
			s.bits >>= lmain
			s.nb -= lmain
			e = lsub[int(e>>16)+int(s.bits&(1<<(e>>8&15)-1))]
		}
		c := uint(e & 31)
		if s.nb < c || c == 0 {
			err = badCode(s.pos, s.nb < c && c != 0)
			break
		}
		s.bits >>= c
		s.nb -= c
		if kind := e >> 5 & 7; kind == kLit {
			if n >= len(out) {
				err = ErrShort
				break
			}
			out[n] = byte(e >> 16)
			n++
			continue
		} else if kind == kEnd {
			d.block = blockNone
			break
		} else if kind != kLen {
			err = badCode(s.pos, false)
			break
		}
		if n, err = d.match(&s, e, n); err != nil {
			break
		}
	}
	d.pos, d.bits, d.nb, d.n = s.pos, s.bits, s.nb, n
	return err
}

// bitState is the bit reader while a block is decoded.
type bitState struct {
	pos  int
	bits uint64
	nb   uint
}

// refill tops the bits up: a word at a time while the input has 8 bytes
// left, else a byte at a time (see Decoder.refill).
func (s *bitState) refill(in []byte) {
	if s.pos+8 <= len(in) {
		s.bits |= leUint64(in[s.pos:]) << s.nb
		s.pos += int(63-s.nb) >> 3
		s.nb |= 56
		return
	}
	for s.nb <= 56 && s.pos < len(in) {
		s.bits |= uint64(in[s.pos]) << s.nb
		s.pos++
		s.nb += 8
	}
}

// match decodes the rest of a length/distance pair whose length code e
// was just read — its extra bits, then the distance code and its extra
// bits — and copies the match to out[n:]; it returns the new output size.
func (d *Decoder) match(s *bitState, e uint32, n int) (int, error) {
	x := uint(e >> 8 & 15)
	if s.nb < x {
		return n, errEOF(s.pos)
	}
	length := int(e>>16) + int(s.bits&(1<<x-1))
	s.bits >>= x
	s.nb -= x
	if s.nb < 28 {
		s.refill(d.in)
	}
	e = d.dist.main[s.bits&(1<<d.dist.mainBits-1)&(1<<litMainBits-1)]
	if e>>5&7 == kSub {
		if s.nb < d.dist.mainBits {
			return n, errEOF(s.pos)
		}
		s.bits >>= d.dist.mainBits
		s.nb -= d.dist.mainBits
		e = d.dist.sub[int(e>>16)+int(s.bits&(1<<(e>>8&15)-1))]
	}
	c := uint(e & 31)
	x = uint(e >> 8 & 15)
	if e>>5&7 != kDist || s.nb < c+x {
		return n, badCode(s.pos, e>>5&7 == kDist)
	}
	s.bits >>= c
	distance := int(e>>16) + int(s.bits&(1<<x-1))
	s.bits >>= x
	s.nb -= c + x
	if distance > n {
		return n, &Error{s.pos, "distance past the start of the output"}
	}
	if length > len(d.out)-n {
		return n, ErrShort
	}
	copyMatch(d.out, n, distance, length)
	return n + length, nil
}

// copyMatch copies length bytes from distance back to out[n:]: eight at a
// time where the source is at least eight back and the output has room
// for a whole last word, else a byte at a time (an overlapping run).
func copyMatch(out []byte, n, distance, length int) {
	src := n - distance
	if distance >= 8 && n+length+8 <= len(out) {
		for i := 0; i < length; i += 8 {
			putLeUint64(out[n+i:], leUint64(out[src+i:]))
		}
		return
	}
	if distance >= length {
		copy(out[n:n+length], out[src:src+length])
		return
	}
	for i := 0; i < length; i++ {
		out[n+i] = out[src+i]
	}
}

func leUint64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func putLeUint64(b []byte, v uint64) {
	_ = b[7]
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	b[4], b[5], b[6], b[7] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
}

func errEOF(pos int) error { return &Error{pos, "unexpected end of stream"} }

// badCode is an invalid code, or the end of the input inside one.
func badCode(pos int, eof bool) error {
	if eof {
		return errEOF(pos)
	}
	return &Error{pos, "invalid Huffman code"}
}
