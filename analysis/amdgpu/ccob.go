package amdgpu

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// ccobMagic starts a compressed offload bundle (clang-offload-bundler
// -compress, ROCm 6 and later).
const ccobMagic = "CCOB"

// DecompressBudget caps what the compressed bundles of one file (or one
// region a log names) may expand to, together: a bundle is one translation
// unit's code objects, tens of MiB at most. The size a bundle's header
// states is charged before anything is allocated, and the bundle is
// decompressed once into a buffer of exactly that size.
const DecompressBudget = 256 << 20

// maxExpansion caps the ratio of a bundle's uncompressed to compressed
// size: code objects compress 3-10 times; a header that claims far more
// would make the decoder allocate for data that is not there.
const maxExpansion = 64

// maxZstdWindow caps the zstd window a frame may ask for (zstd's own
// limit for levels up to 19 is 8 MiB; --ultra levels reach 128 MiB).
const maxZstdWindow = 128 << 20

// Compression methods of the CCOB header (llvm::compression::Format).
const (
	ccobZlib = 0
	ccobZstd = 1
)

// compressedBundle is the decoded CCOB header:
//
//	v1: "CCOB", u16 version, u16 method, u32 uncompressed size, u64 hash
//	v2: "CCOB", u16 version, u16 method, u32 total size, u32 uncompressed size, u64 hash
//	v3: "CCOB", u16 version, u16 method, u64 total size, u64 uncompressed size, u64 hash
//
// Total size counts the header; v1 has none, so a v1 bundle runs to the
// end of its container.
type compressedBundle struct {
	version, method uint16
	total, rawSize  uint64
	headerLen       int
	payload         []byte
}

func parseCCOBHeader(data []byte) (compressedBundle, error) {
	var h compressedBundle
	if !bytes.HasPrefix(data, []byte(ccobMagic)) {
		return h, &BundleError{0, "no CCOB magic"}
	}
	if len(data) < 8 {
		return h, &BundleError{4, "truncated compressed-bundle header"}
	}
	h.version = binary.LittleEndian.Uint16(data[4:])
	h.method = binary.LittleEndian.Uint16(data[6:])
	switch h.version {
	case 1:
		h.headerLen = 20
	case 2:
		h.headerLen = 24
	case 3:
		h.headerLen = 32
	default:
		return h, &BundleError{4, fmt.Sprintf("unknown compressed-bundle version %d", h.version)}
	}
	if len(data) < h.headerLen {
		return h, &BundleError{8, "truncated compressed-bundle header"}
	}
	switch h.version {
	case 1:
		h.rawSize, h.total = uint64(binary.LittleEndian.Uint32(data[8:])), uint64(len(data))
	case 2:
		h.total, h.rawSize = uint64(binary.LittleEndian.Uint32(data[8:])), uint64(binary.LittleEndian.Uint32(data[12:]))
	case 3:
		h.total, h.rawSize = binary.LittleEndian.Uint64(data[8:]), binary.LittleEndian.Uint64(data[16:])
	}
	if h.total < uint64(h.headerLen) || h.total > uint64(len(data)) {
		return h, &BundleError{8, fmt.Sprintf("total size %d outside [%d, %d]", h.total, h.headerLen, len(data))}
	}
	if h.rawSize > DecompressBudget {
		return h, &BundleError{8, fmt.Sprintf("uncompressed size %d over the %d-byte decompression budget", h.rawSize, DecompressBudget)}
	}
	h.payload = data[h.headerLen:h.total]
	if h.rawSize > maxExpansion*uint64(len(h.payload))+4096 {
		return h, &BundleError{8, fmt.Sprintf("uncompressed size %d is over %d times the %d compressed bytes", h.rawSize, maxExpansion, len(h.payload))}
	}
	return h, nil
}

// unzstd decodes the payload's frames, refusing to produce more than the
// header's uncompressed size (RLE blocks let a few bytes claim 128 KiB
// each, so the limit is the decoder's, not a check afterwards).
func unzstd(h compressedBundle) ([]byte, error) {
	var fh zstd.Header
	if err := fh.Decode(h.payload); err != nil {
		return nil, err
	}
	if fh.HasFCS && fh.FrameContentSize != h.rawSize {
		return nil, fmt.Errorf("frame holds %d bytes, header says %d", fh.FrameContentSize, h.rawSize)
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxMemory(max(h.rawSize, 1)), zstd.WithDecoderMaxWindow(maxZstdWindow))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	// Into a buffer of the stated size: the decoder's limit is that size,
	// so the buffer never grows.
	return d.DecodeAll(h.payload, make([]byte, 0, h.rawSize))
}

// DecompressBundle expands a compressed offload bundle into the plain
// bundle it holds, and returns how many bytes of data it occupied. A
// bundle that states more than *budget bytes is refused; what it states is
// taken from *budget.
func DecompressBundle(data []byte, budget *int64) ([]byte, int, error) {
	h, err := parseCCOBHeader(data)
	if err != nil {
		return nil, 0, err
	}
	if h.rawSize > uint64(max(*budget, 0)) {
		return nil, 0, &BundleError{8, fmt.Sprintf("uncompressed size %d is over what is left of the %d-byte decompression budget of this file (%d bytes)",
			h.rawSize, DecompressBudget, max(*budget, 0))}
	}
	*budget -= int64(h.rawSize)
	var out []byte
	switch h.method {
	case ccobZlib:
		out, err = inflate(h)
	case ccobZstd:
		if out, err = unzstd(h); err != nil {
			err = &BundleError{int64(h.headerLen), "decompressing (zstd): " + err.Error()}
		}
	default:
		return nil, 0, &BundleError{6, fmt.Sprintf("unknown compression method %d", h.method)}
	}
	if err != nil {
		return nil, 0, err
	}
	if uint64(len(out)) != h.rawSize {
		return nil, 0, &BundleError{8, fmt.Sprintf("expanded to %d bytes, header says %d", len(out), h.rawSize)}
	}
	return out, int(h.total), nil
}

// inflate decodes the zlib payload into a buffer of the stated size and
// checks that the stream ends there.
func inflate(h compressedBundle) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(h.payload))
	if err != nil {
		return nil, &BundleError{int64(h.headerLen), "decompressing (zlib): " + err.Error()}
	}
	defer zr.Close()
	out := make([]byte, h.rawSize)
	n, err := io.ReadFull(zr, out)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return out[:n], nil // shorter than stated: the caller says so
	} else if err != nil {
		return nil, &BundleError{int64(h.headerLen), "decompressing (zlib): " + err.Error()}
	}
	if k, _ := zr.Read(make([]byte, 1)); k > 0 {
		return nil, &BundleError{8, fmt.Sprintf("expands past the %d bytes the header says", h.rawSize)}
	}
	return out, nil
}
