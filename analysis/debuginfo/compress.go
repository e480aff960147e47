package debuginfo

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// decompressELF decodes an SHF_COMPRESSED section: an Elf32_Chdr or
// Elf64_Chdr (gABI "Section Compression") followed by the compressed stream.
func decompressELF(raw []byte, class elf.Class, bo binary.ByteOrder) ([]byte, error) {
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

// decompressGNU decodes a legacy .zdebug_* section: "ZLIB", an 8-byte
// big-endian uncompressed size, then a zlib stream.
func decompressGNU(raw []byte) ([]byte, error) {
	if len(raw) < 12 || string(raw[:4]) != "ZLIB" {
		return nil, errors.New("bad .zdebug header")
	}
	return inflate(zlibReader(raw[12:]), binary.BigEndian.Uint64(raw[4:]))
}

func zlibReader(b []byte) func() (io.Reader, error) {
	return func() (io.Reader, error) { return zlib.NewReader(bytes.NewReader(b)) }
}

// inflate reads exactly size bytes from the stream, refusing sizes above the cap.
func inflate(open func() (io.Reader, error), size uint64) ([]byte, error) {
	if size > maxDecompressedSection {
		return nil, fmt.Errorf("decompressed size %d exceeds the %d-byte cap", size, maxDecompressedSection)
	}
	r, err := open()
	if err != nil {
		return nil, err
	}
	// Grow with the data actually produced, so a lying header cannot make us
	// allocate the whole cap up front.
	var buf bytes.Buffer
	buf.Grow(int(min(size, 1<<20)))
	if _, err := io.Copy(&buf, io.LimitReader(r, int64(size))); err != nil {
		return nil, fmt.Errorf("decompressing: %w", err)
	}
	if uint64(buf.Len()) != size {
		return nil, fmt.Errorf("decompressed %d bytes, header says %d", buf.Len(), size)
	}
	return buf.Bytes(), nil
}
