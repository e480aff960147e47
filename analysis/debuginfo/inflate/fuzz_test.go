package inflate

import (
	"bytes"
	"compress/zlib"
	"io"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzInflate decodes arbitrary bytes as a zlib stream into an output of
// the size the input names, in steps: never a panic, a hang, an
// allocation past the budget or a write past the output; and where
// compress/zlib reads the stream whole to exactly that size, the same
// bytes.
func FuzzInflate(f *testing.F) {
	for _, level := range []int{0, 1, 6, 9, -2} {
		data := corpus(int64(level+3), 3000)
		f.Add(zlibBytes(f, data, level), uint32(len(data)), uint16(700))
	}
	f.Add([]byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01}, uint32(0), uint16(1))
	f.Fuzz(func(t *testing.T, in []byte, size uint32, step uint16) {
		size %= 1 << 20
		out := make([]byte, size)
		var n int
		var err error
		fuzzbudget.Check(t, len(in), fuzzbudget.Default, func() {
			d, e := NewZlib(in, out)
			if e != nil {
				err = e
				return
			}
			for err == nil && n < len(out) {
				n, err = d.DecodeTo(n + int(step) + 1)
			}
			if err == nil {
				n, err = d.DecodeTo(len(out))
			}
		})
		want, werr := readZlib(in, int(size))
		if werr == nil && len(want) == int(size) {
			if err != nil || !bytes.Equal(out[:n], want) {
				t.Fatalf("compress/zlib reads %d bytes; inflate: %d bytes, %v", len(want), n, err)
			}
		}
	})
}

// readZlib reads at most limit+1 bytes of the zlib stream in, to its end
// and checksum.
func readZlib(in []byte, limit int) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(in))
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil || len(b) > limit {
		return b, io.ErrShortBuffer
	}
	return b, nil
}
