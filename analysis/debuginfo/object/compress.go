package object

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/faultline-dev/faultline/analysis/debuginfo/inflate"
	"github.com/klauspost/compress/zstd"
)

// stream is a compressed section's stream: its decompressed size (from
// the header) and how to open a decoder positioned at its start that
// writes into out, a buffer of that size.
type stream struct {
	size uint64
	open func(out []byte) (dec decoder, closeDec func(), err error)
	hdr  int // the compression header's size: the stream starts after it
}

// decoder decompresses a stream into its buffer as far as asked: to at
// least target bytes (a little past is allowed), returning how far it got;
// read is how many bytes of the stream the output so far was decoded
// from (at most: all of it when the decoder cannot say).
type decoder interface {
	decodeTo(target int) (int, error)
	read() int
}

// inflater is a zlib stream, decoded by package inflate straight into the
// section's buffer (the buffer is its own history: nothing is copied out
// of a window).
type inflater struct{ d *inflate.Decoder }

func (z inflater) read() int { return z.d.InputRead() }

func (z inflater) decodeTo(target int) (int, error) {
	n, err := z.d.DecodeTo(target)
	if errors.Is(err, inflate.ErrShort) {
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

// readerDecoder is a stream read through an io.Reader (zstd).
type readerDecoder struct {
	r     io.Reader
	out   []byte
	n     int
	input int // the stream's size: what a reader read from is unknown
}

func (r *readerDecoder) read() int { return r.input }

func (r *readerDecoder) decodeTo(target int) (int, error) {
	k, err := io.ReadFull(r.r, r.out[r.n:max(target, r.n)])
	r.n += k
	return r.n, err
}

// elfStream reads an SHF_COMPRESSED section's header: an Elf32_Chdr or
// Elf64_Chdr (gABI "Section Compression") followed by the compressed stream.
func elfStream(raw []byte, class elf.Class, bo binary.ByteOrder) (stream, error) {
	var typ uint32
	var size uint64
	var hdr int
	switch class {
	case elf.ELFCLASS64:
		if len(raw) < 24 {
			return stream{}, errors.New("truncated Elf64_Chdr")
		}
		typ, size, hdr = bo.Uint32(raw[0:]), bo.Uint64(raw[8:]), 24
	case elf.ELFCLASS32:
		if len(raw) < 12 {
			return stream{}, errors.New("truncated Elf32_Chdr")
		}
		typ, size, hdr = bo.Uint32(raw[0:]), uint64(bo.Uint32(raw[4:])), 12
	default:
		return stream{}, errors.New("unknown ELF class")
	}
	if size > maxDecompressedSection {
		return stream{}, errTooBig(size)
	}
	switch elf.CompressionType(typ) {
	case elf.COMPRESS_ZLIB:
		return stream{size, zlibOpener(raw[hdr:]), hdr}, nil
	case elf.COMPRESS_ZSTD:
		return stream{size, zstdOpener(raw[hdr:]), hdr}, nil
	default:
		return stream{}, fmt.Errorf("unsupported compression type %d", typ)
	}
}

// gnuStream reads a legacy .zdebug_* section's header: "ZLIB", an 8-byte
// big-endian uncompressed size, then a zlib stream.
func gnuStream(raw []byte) (stream, error) {
	if len(raw) < 12 || string(raw[:4]) != "ZLIB" {
		return stream{}, errors.New("bad .zdebug header")
	}
	size := binary.BigEndian.Uint64(raw[4:])
	if size > maxDecompressedSection {
		return stream{}, errTooBig(size)
	}
	return stream{size, zlibOpener(raw[12:]), 12}, nil
}

func zlibOpener(b []byte) func([]byte) (decoder, func(), error) {
	return func(out []byte) (decoder, func(), error) {
		d, err := inflate.NewZlib(b, out)
		if err != nil {
			return nil, nil, err
		}
		return inflater{d}, nil, nil
	}
}

func zstdOpener(b []byte) func([]byte) (decoder, func(), error) {
	return func(out []byte) (decoder, func(), error) {
		dec, err := zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(maxDecompressedSection))
		if err != nil {
			return nil, nil, err
		}
		return &readerDecoder{r: dec, out: out, input: len(b)}, dec.Close, nil
	}
}

func errTooBig(size uint64) error {
	return fmt.Errorf("decompressed size %d exceeds the %d-byte cap", size, maxDecompressedSection)
}

func errShort(n, size uint64) error {
	return fmt.Errorf("decompressed %d bytes, header says %d", n, size)
}

// DecompressELF decodes a whole SHF_COMPRESSED section (see elfStream).
func DecompressELF(raw []byte, class elf.Class, bo binary.ByteOrder) ([]byte, error) {
	s, err := elfStream(raw, class, bo)
	if err != nil {
		return nil, err
	}
	return inflateAll(s)
}

// DecompressGNU decodes a whole legacy .zdebug_* section (see gnuStream).
func DecompressGNU(raw []byte) ([]byte, error) {
	s, err := gnuStream(raw)
	if err != nil {
		return nil, err
	}
	return inflateAll(s)
}

// inflate decodes the whole stream into a buffer of its size allocated
// once (sectionbuf.go). A header that claims more than the stream holds
// costs address space, not memory: the buffer's pages are only backed
// once written.
func inflateAll(s stream) ([]byte, error) {
	buf, err := allocSection(int(s.size))
	if err != nil {
		return nil, err
	}
	dec, closeDec, err := s.open(buf)
	if err != nil {
		freeSection(buf)
		return nil, err
	}
	if closeDec != nil {
		defer closeDec()
	}
	n, err := dec.decodeTo(len(buf))
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		freeSection(buf)
		return nil, errShort(uint64(n), s.size)
	}
	if err != nil {
		freeSection(buf)
		return nil, fmt.Errorf("decompressing: %w", err)
	}
	return buf, nil
}
