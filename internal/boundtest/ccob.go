package boundtest

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"io"
)

// ZlibCCOB lays out an AMD compressed offload bundle (clang-offload-bundler
// -compress, version 3 header, zlib) whose payload is raw zero bytes
// deflated, padded with zeros to at least pad bytes, and whose header
// states raw as the uncompressed size: a decompression bomb.
func ZlibCCOB(raw int64, pad int) []byte {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	io.CopyN(zw, zeros{}, raw)
	zw.Close()
	payload := z.Bytes()
	if len(payload) < pad {
		payload = append(payload, make([]byte, pad-len(payload))...)
	}
	h := make([]byte, 32)
	copy(h, "CCOB")
	binary.LittleEndian.PutUint16(h[4:], 3) // version
	binary.LittleEndian.PutUint16(h[6:], 0) // zlib
	binary.LittleEndian.PutUint64(h[8:], uint64(32+len(payload)))
	binary.LittleEndian.PutUint64(h[16:], uint64(raw))
	return append(h, payload...)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
