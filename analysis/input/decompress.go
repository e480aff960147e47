package input

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
)

// MaxPlainBytes caps what a compressed dump (or standard input) may
// inflate to on disk: the one place a decompression bomb is stopped.
const MaxPlainBytes = 64 << 30

// zstdMaxWindow caps the window a zstd frame may ask the decoder for.
const zstdMaxWindow = 1 << 31

// The magic numbers that start each compressed format.
var (
	gzipMagic = []byte{0x1f, 0x8b}                     // RFC 1952 §2.3.1
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}         // RFC 8878 §3.1.1
	xzMagic   = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00} // xz file format §2.1.1.1
	lz4Magic  = []byte{0x04, 0x22, 0x4d, 0x18}         // LZ4 frame format, magic 0x184D2204
	magicLen  = max(len(gzipMagic), len(zstdMagic), len(xzMagic), len(lz4Magic))
)

// compressionOf names the compression a dump's first bytes announce, ""
// for none.
func compressionOf(magic []byte) string {
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		return "gzip"
	case bytes.HasPrefix(magic, zstdMagic):
		return "zstd"
	case bytes.HasPrefix(magic, xzMagic):
		return "xz"
	case bytes.HasPrefix(magic, lz4Magic):
		return "lz4"
	}
	return ""
}

// decompress returns r's plain bytes ("" compression: r itself).
func decompress(format string, r io.Reader) (io.ReadCloser, error) {
	switch format {
	case "":
		return io.NopCloser(r), nil
	case "gzip":
		return gzip.NewReader(r)
	case "zstd":
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow))
		if err != nil {
			return nil, err
		}
		return zr.IOReadCloser(), nil
	case "xz":
		xr, err := xz.NewReader(r)
		if err != nil {
			return nil, err
		}
		return io.NopCloser(xr), nil
	case "lz4":
		return io.NopCloser(lz4.NewReader(r)), nil
	}
	return nil, fmt.Errorf("unknown compression %q", format)
}

// copyCapped copies the plain bytes into w, failing past MaxPlainBytes.
func copyCapped(w io.Writer, plain io.Reader, format string) error {
	n, err := io.Copy(w, io.LimitReader(plain, MaxPlainBytes+1))
	if err != nil {
		if format != "" {
			return fmt.Errorf("decompressing %s: %w", format, err)
		}
		return err
	}
	if n > MaxPlainBytes {
		if format == "" {
			return fmt.Errorf("standard input holds more than %d GiB", MaxPlainBytes>>30)
		}
		return fmt.Errorf("%s data inflates past %d GiB", format, MaxPlainBytes>>30)
	}
	return nil
}
