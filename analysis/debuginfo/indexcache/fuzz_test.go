package indexcache

import (
	"encoding/binary"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// entry builds the bytes of an entry as Put writes them, with the payload
// length field set to plen.
func entry(key string, payload []byte, plen uint64) []byte {
	h := header(key, payload)
	binary.LittleEndian.PutUint64(h[16:], plen)
	return append(h, payload...)
}

// FuzzVerify: a cache entry is bytes on disk that anything may have
// written or damaged; verify accepts exactly the entries whose header,
// key and checksum agree, returns a payload inside the entry, and never
// panics. The seeds include a payload length that wraps the header sum
// (it made verify slice past the entry before the length was checked).
func FuzzVerify(f *testing.F) {
	const key = "0123456789abcdef-sections"
	good := entry(key, []byte("payload bytes"), 13)
	f.Add(good, key)
	f.Add(good[:headerSize], key)
	// A cut key with a length field that wraps headerSize+klen+plen to
	// the entry's size: 32+25+plen = 37 (mod 2^64) with plen = 2^64-20.
	f.Add(entry(key, nil, ^uint64(0)-19)[:headerSize+5], key)
	f.Add(entry("k", []byte{}, 0), "k")
	f.Fuzz(func(t *testing.T, m []byte, key string) {
		fuzzbudget.Check(t, len(m), fuzzbudget.Default, func() {
			payload, ok := verify(m, key)
			if !ok {
				return
			}
			if len(payload) > len(m)-headerSize-len(key) {
				t.Fatalf("payload of %d bytes from a %d-byte entry", len(payload), len(m))
			}
			if want := header(key, payload); string(m[:len(want)]) != string(want) {
				t.Fatal("accepted an entry whose checksums do not match")
			}
		})
	})
}
