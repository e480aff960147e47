// Package inflate decodes zlib (RFC 1950) and raw deflate (RFC 1951)
// streams into a buffer the caller sized from the stream's header (an ELF
// compression header, a .zdebug size), as far as the caller asks.
//
// A compressed debug section is inflated into one buffer of its whole size,
// so the output is its own history: back-references copy within it, with
// no sliding window to copy out of (what makes compress/flate and its
// faster forks move every byte twice). Decoding stops at the first symbol
// boundary at or past the offset asked for and goes on from there on the
// next call, so a reader of the first units of a section never decodes the
// rest. Huffman codes are decoded through tables indexed by the next 11
// (literal/length) or 8 (distance) bits of a 64-bit bit buffer refilled a
// word at a time, after libdeflate's decompressor.
//
// Every read of the input and write of the output is bounds-checked: a
// malformed stream gives an error with the input offset, never a panic or
// a write past the buffer.
package inflate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
)

// Decoder inflates one stream into out. It is not safe for concurrent use.
type Decoder struct {
	in   []byte
	pos  int    // next input byte not yet in bits
	bits uint64 // bit buffer, least significant bit first (RFC 1951 §3.1.1)
	nb   uint   // valid bits in bits

	out []byte
	n   int // bytes of out written

	zlib   bool
	final  bool   // the current block is the last
	block  int    // blockNone, blockStored or blockHuffman
	stored int    // bytes left in a stored block
	lit    *table // the current block's codes: fixed, or dyn*
	dist   *table
	dynLit table
	dynDst table
	clen   table
	done   bool
	err    error
}

const (
	blockNone = iota
	blockStored
	blockHuffman
)

// Error is a malformed stream: what was wrong and the input offset where
// it was found.
type Error struct {
	Off int
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("inflate: %s at input offset %d", e.Msg, e.Off) }

// ErrShort reports a stream that ended before filling its output, or that
// needed more output than there is.
var ErrShort = errors.New("inflate: stream and output size disagree")

// NewZlib returns a decoder of the zlib stream in (RFC 1950 §2.2: CMF, FLG,
// no preset dictionary, deflate data, Adler-32 of the output) into out.
func NewZlib(in, out []byte) (*Decoder, error) {
	if len(in) < 2 {
		return nil, &Error{0, "truncated zlib header"}
	}
	cmf, flg := in[0], in[1]
	switch {
	case cmf&0x0f != 8 || cmf>>4 > 7:
		return nil, &Error{0, "not a deflate zlib stream"}
	case (uint(cmf)<<8|uint(flg))%31 != 0:
		return nil, &Error{1, "bad zlib header check"}
	case flg&0x20 != 0:
		return nil, &Error{1, "zlib preset dictionary"}
	}
	d := NewRaw(in, out)
	d.zlib, d.pos = true, 2
	return d, nil
}

// NewRaw returns a decoder of the raw deflate stream in into out.
func NewRaw(in, out []byte) *Decoder {
	return &Decoder{in: in, out: out}
}

// Written is how many bytes of out hold decoded data.
func (d *Decoder) Written() int { return d.n }

// InputRead is how many bytes of the input have been read (into the bit
// buffer, so a few past the last symbol decoded): the output written so
// far depends on no byte past them.
func (d *Decoder) InputRead() int { return d.pos }

// DecodeTo decodes until at least target bytes of out are written (or out
// is full and the stream ended) and returns how many are. It may write a
// little past target, never past out. The first error sticks.
func (d *Decoder) DecodeTo(target int) (int, error) {
	target = min(target, len(d.out))
	for d.err == nil && d.n < target {
		if d.done {
			d.err = ErrShort
			break
		}
		d.err = d.step(target)
	}
	if d.err == nil && d.n == len(d.out) && !d.done {
		d.err = d.finish()
	}
	return d.n, d.err
}

// step reads a block header or decodes within the current block.
func (d *Decoder) step(target int) error {
	switch d.block {
	case blockStored:
		return d.copyStored(target)
	case blockHuffman:
		return d.huffman(target)
	}
	if d.final {
		d.done = true
		return d.trailer()
	}
	return d.blockHeader()
}

// finish reads what follows the last block once out is full: the stream
// must end there (a block boundary, then the trailer).
func (d *Decoder) finish() error {
	for !d.done {
		if d.block != blockNone {
			if d.block == blockHuffman {
				// Only an end-of-block code may follow.
				if err := d.huffman(len(d.out) + 1); err != nil {
					return err
				}
				continue
			}
			if d.stored > 0 {
				return ErrShort
			}
			d.block = blockNone
			continue
		}
		if err := d.step(len(d.out)); err != nil {
			return err
		}
	}
	return nil
}

// trailer checks the zlib Adler-32 (RFC 1950 §2.2) after the last block.
func (d *Decoder) trailer() error {
	if !d.zlib {
		return nil
	}
	d.alignByte()
	var b [4]byte
	for i := range b {
		v, err := d.getBits(8)
		if err != nil {
			return err
		}
		b[i] = byte(v)
	}
	if binary.BigEndian.Uint32(b[:]) != adler32.Checksum(d.out[:d.n]) {
		return &Error{d.pos, "Adler-32 mismatch"}
	}
	return nil
}

// blockHeader reads BFINAL and BTYPE and the block's own header (RFC 1951
// §3.2.3).
func (d *Decoder) blockHeader() error {
	h, err := d.getBits(3)
	if err != nil {
		return err
	}
	d.final = h&1 != 0
	switch h >> 1 {
	case 0:
		return d.storedHeader()
	case 1:
		d.lit, d.dist = fixedTables()
		d.block = blockHuffman
		return nil
	case 2:
		if err := d.dynamicHeader(); err != nil {
			return err
		}
		d.block = blockHuffman
		return nil
	}
	return &Error{d.pos, "reserved block type"}
}

// storedHeader reads LEN and NLEN after the byte boundary (§3.2.4).
func (d *Decoder) storedHeader() error {
	d.alignByte()
	v, err := d.getBits(32)
	if err != nil {
		return err
	}
	n, nn := uint16(v), uint16(v>>16)
	if n != ^nn {
		return &Error{d.pos, "stored block length check"}
	}
	d.stored, d.block = int(n), blockStored
	return nil
}

// copyStored copies a stored block's bytes, as far as target.
func (d *Decoder) copyStored(target int) error {
	// The bit buffer's whole bytes (it is byte-aligned) come first.
	for d.stored > 0 && d.nb >= 8 && d.n < len(d.out) {
		d.out[d.n] = byte(d.bits)
		d.bits >>= 8
		d.nb -= 8
		d.n++
		d.stored--
	}
	if d.stored == 0 {
		d.block = blockNone
		return nil
	}
	if d.nb > 0 || d.n >= len(d.out) {
		return ErrShort
	}
	// The rest straight from the input: the bit buffer's look-ahead bits
	// go stale.
	d.bits = 0
	k := min(d.stored, len(d.in)-d.pos, len(d.out)-d.n, max(target-d.n, 1))
	if k <= 0 {
		return &Error{d.pos, "stored block past the input"}
	}
	copy(d.out[d.n:], d.in[d.pos:d.pos+k])
	d.n, d.pos, d.stored = d.n+k, d.pos+k, d.stored-k
	if d.stored == 0 {
		d.block = blockNone
	}
	return nil
}

// alignByte drops the bits up to the next byte boundary.
func (d *Decoder) alignByte() {
	k := d.nb & 7
	d.bits >>= k
	d.nb -= k
}

// getBits reads n (at most 32) bits, refilling a byte at a time.
func (d *Decoder) getBits(n uint) (uint32, error) {
	for d.nb < n {
		if d.pos >= len(d.in) {
			return 0, &Error{d.pos, "unexpected end of stream"}
		}
		d.bits |= uint64(d.in[d.pos]) << d.nb
		d.pos++
		d.nb += 8
	}
	v := uint32(d.bits & (1<<n - 1))
	d.bits >>= n
	d.nb -= n
	return v, nil
}

// refill tops the bit buffer up to at least 56 bits where the input has
// them: a word at a time while 8 bytes remain (the bits past the valid
// ones are the stream's next bits, so loading them again is harmless),
// else a byte at a time.
func (d *Decoder) refill() {
	if d.pos+8 <= len(d.in) {
		d.bits |= binary.LittleEndian.Uint64(d.in[d.pos:]) << d.nb
		d.pos += int(63-d.nb) >> 3
		d.nb |= 56
		return
	}
	for d.nb <= 56 && d.pos < len(d.in) {
		d.bits |= uint64(d.in[d.pos]) << d.nb
		d.pos++
		d.nb += 8
	}
}
