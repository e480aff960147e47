package object

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// DecompressELF decodes an SHF_COMPRESSED section: an Elf32_Chdr or
// Elf64_Chdr (gABI "Section Compression") followed by the compressed stream.
func DecompressELF(raw []byte, class elf.Class, bo binary.ByteOrder) ([]byte, error) {
	var typ uint32
	var size uint64
	var hdr int
	switch class {
	case elf.ELFCLASS64:
		if len(raw) < 24 {
			return nil, errors.New("truncated Elf64_Chdr")
		}
		typ, size, hdr = bo.Uint32(raw[0:]), bo.Uint64(raw[8:]), 24
	case elf.ELFCLASS32:
		if len(raw) < 12 {
			return nil, errors.New("truncated Elf32_Chdr")
		}
		typ, size, hdr = bo.Uint32(raw[0:]), uint64(bo.Uint32(raw[4:])), 12
	default:
		return nil, errors.New("unknown ELF class")
	}
	switch elf.CompressionType(typ) {
	case elf.COMPRESS_ZLIB:
		return inflate(zlibReader(raw[hdr:]), size)
	case elf.COMPRESS_ZSTD:
		dec, err := zstd.NewReader(bytes.NewReader(raw[hdr:]), zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(maxDecompressedSection))
		if err != nil {
			return nil, err
		}
		defer dec.Close()
		return inflate(func() (io.Reader, error) { return dec, nil }, size)
	default:
		return nil, fmt.Errorf("unsupported compression type %d", typ)
	}
}

// statedSize is the uncompressed size a compressed section's header
// states (Elf32_Chdr/Elf64_Chdr ch_size, or .zdebug's big-endian size); 0
// when the header is truncated (no cache entry has that size: the
// decompression reports the damage).
func statedSize(raw []byte, gnuZ bool, class elf.Class, bo binary.ByteOrder) uint64 {
	switch {
	case gnuZ && len(raw) >= 12:
		return binary.BigEndian.Uint64(raw[4:])
	case gnuZ:
		return 0
	case class == elf.ELFCLASS64 && len(raw) >= 24:
		return bo.Uint64(raw[8:])
	case class == elf.ELFCLASS32 && len(raw) >= 12:
		return uint64(bo.Uint32(raw[4:]))
	}
	return 0
}

// DecompressGNU decodes a legacy .zdebug_* section: "ZLIB", an 8-byte
// big-endian uncompressed size, then a zlib stream.
func DecompressGNU(raw []byte) ([]byte, error) {
	if len(raw) < 12 || string(raw[:4]) != "ZLIB" {
		return nil, errors.New("bad .zdebug header")
	}
	return inflate(zlibReader(raw[12:]), binary.BigEndian.Uint64(raw[4:]))
}

func zlibReader(b []byte) func() (io.Reader, error) {
	return func() (io.Reader, error) { return zlib.NewReader(bytes.NewReader(b)) }
}

// inflate reads exactly size bytes from the stream into a buffer of that
// size allocated once (sectionbuf.go), refusing sizes above the cap. A
// header that claims more than the stream holds costs address space, not
// memory: the buffer's pages are only backed once written.
func inflate(open func() (io.Reader, error), size uint64) ([]byte, error) {
	if size > maxDecompressedSection {
		return nil, fmt.Errorf("decompressed size %d exceeds the %d-byte cap", size, maxDecompressedSection)
	}
	r, err := open()
	if err != nil {
		return nil, err
	}
	buf, err := allocSection(int(size))
	if err != nil {
		return nil, err
	}
	n, err := io.ReadFull(r, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		freeSection(buf)
		return nil, fmt.Errorf("decompressed %d bytes, header says %d", n, size)
	}
	if err != nil {
		freeSection(buf)
		return nil, fmt.Errorf("decompressing: %w", err)
	}
	return buf, nil
}
