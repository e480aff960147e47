package input

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
)

// MaxPlainBytes caps what a compressed dump (or standard input) may
// inflate to on disk: the one place a decompression bomb is stopped. The
// command line raises it (--max-decompressed).
var MaxPlainBytes int64 = 16 << 30

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
	case "zlib": // only inside an old apport report (RFC 1950)
		return zlib.NewReader(r)
	}
	return nil, fmt.Errorf("unknown compression %q", format)
}

// copyCapped copies the plain bytes into w, failing past MaxPlainBytes. A
// stream that breaks off (truncated or damaged compressed data) after some
// plain bytes is not an error: damaged says why it ended, and the bytes
// written are read like a truncated plain dump.
func copyCapped(w io.Writer, plain io.Reader, format string) (damaged string, err error) {
	src := &readErr{r: io.LimitReader(plain, MaxPlainBytes+1)}
	n, err := io.Copy(w, src)
	if err != nil && src.err != nil && format != "" {
		if n == 0 {
			return "", fmt.Errorf("decompressing %s: %w", format, err)
		}
		return fmt.Sprintf("the %s data breaks off after %d decompressed bytes (%v); read as a truncated dump", format, n, err), nil
	}
	if err != nil {
		return "", err
	}
	if n > MaxPlainBytes {
		if format == "" {
			return "", fmt.Errorf("standard input holds more than %d bytes (--max-decompressed)", MaxPlainBytes)
		}
		return "", fmt.Errorf("%s data inflates past %d bytes (--max-decompressed raises the cap)", format, MaxPlainBytes)
	}
	return "", nil
}

// readErr remembers a reader's error, to tell a broken stream from a
// failed write.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// plausibleDump reports whether the first decompressed bytes can start a
// dump faultline reads: an ELF file (cores, NVIDIA GPU cores) or text (a
// log). Checked before anything is written, so a bomb of zeros or of
// anything else is refused after a few bytes, not after filling the disk.
func plausibleDump(head []byte) bool {
	if bytes.HasPrefix(head, []byte("\x7fELF")) {
		return true
	}
	if len(head) == 0 {
		return false
	}
	for _, c := range head {
		if c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b && c != '\f') {
			return false
		}
	}
	return true
}
