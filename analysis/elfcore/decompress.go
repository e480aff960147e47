package elfcore

import (
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

var (
	gzipMagic = []byte{0x1f, 0x8b}             // RFC 1952 §2.3.1
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd} // RFC 8878 §3.1.1
)

// decompressToTemp stream-decompresses f into a new temporary file and
// returns its path. The caller removes it.
func decompressToTemp(f *os.File, format string) (path string, err error) {
	var r io.Reader
	switch format {
	case "gzip":
		zr, err := gzip.NewReader(f)
		if err != nil {
			return "", err
		}
		defer zr.Close()
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<31))
		if err != nil {
			return "", err
		}
		defer zr.Close()
		r = zr
	default:
		return "", fmt.Errorf("unknown compression %q", format)
	}
	tmp, err := os.CreateTemp("", "faultline-core-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(tmp.Name())
			path = ""
		}
	}()
	if _, err := io.Copy(tmp, r); err != nil {
		return "", err
	}
	return tmp.Name(), nil
}
