package amdgpu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// bundleMagic starts an uncompressed clang offload bundle.
const bundleMagic = "__CLANG_OFFLOAD_BUNDLE__"

// Caps on what a bundle header may claim: real bundles hold a handful of
// entries with short target names.
const (
	maxBundleEntries = 4096
	maxBundleIDLen   = 1024
)

// BundleEntry is one entry of a clang offload bundle.
type BundleEntry struct {
	// ID is the entry's target, "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"
	// or "host-x86_64-unknown-linux-gnu".
	ID string
	// Offset is the payload's offset within the bundle.
	Offset uint64
	// Data is the payload (empty for the host entry of a device-only bundle).
	Data []byte
}

// Device reports whether the entry holds AMD GPU code.
func (e BundleEntry) Device() bool { return strings.Contains(e.ID, "amdgcn-") }

// Target is the entry's processor and features ("gfx90a:xnack-"), the part
// of the ID after the triple.
func (e BundleEntry) Target() string {
	if i := strings.Index(e.ID, "amdhsa-"); i >= 0 {
		return strings.TrimLeft(e.ID[i+len("amdhsa-"):], "-")
	}
	return ""
}

// BundleError reports a malformed bundle, with the offset (within the
// bundle) where it was found.
type BundleError struct {
	Off int64
	Msg string
}

func (e *BundleError) Error() string {
	return fmt.Sprintf("offload bundle: offset %#x: %s", e.Off, e.Msg)
}

// IsBundle reports whether data starts with an offload bundle (plain or compressed).
func IsBundle(data []byte) bool {
	return bytes.HasPrefix(data, []byte(bundleMagic)) || bytes.HasPrefix(data, []byte(ccobMagic))
}

// ParseBundle decodes an uncompressed offload bundle:
//
//	"__CLANG_OFFLOAD_BUNDLE__", u64 number of entries, then per entry
//	u64 offset, u64 size, u64 ID length, ID bytes
//
// (all little-endian; offsets are from the bundle's start). It returns
// the entries and the bundle's end (the furthest byte any header or
// payload reaches), so that concatenated bundles can be walked.
func ParseBundle(data []byte) ([]BundleEntry, int, error) {
	if !bytes.HasPrefix(data, []byte(bundleMagic)) {
		return nil, 0, &BundleError{0, "no " + bundleMagic + " magic"}
	}
	off := len(bundleMagic)
	n, ok := readU64(data, off)
	if !ok {
		return nil, 0, &BundleError{int64(off), "truncated entry count"}
	}
	if n == 0 || n > maxBundleEntries {
		return nil, 0, &BundleError{int64(off), fmt.Sprintf("implausible entry count %d", n)}
	}
	off += 8
	end := off
	entries := make([]BundleEntry, 0, n)
	for i := uint64(0); i < n; i++ {
		e, next, err := parseBundleEntry(data, off)
		if err != nil {
			return entries, end, err
		}
		off = next
		if reach := int(e.Offset) + len(e.Data); reach > end {
			end = reach
		}
		entries = append(entries, e)
	}
	if off > end {
		end = off
	}
	return entries, end, nil
}

func parseBundleEntry(data []byte, off int) (BundleEntry, int, error) {
	start := off
	pOff, ok1 := readU64(data, off)
	size, ok2 := readU64(data, off+8)
	idLen, ok3 := readU64(data, off+16)
	if !ok1 || !ok2 || !ok3 {
		return BundleEntry{}, 0, &BundleError{int64(start), "truncated entry header"}
	}
	off += 24
	if idLen == 0 || idLen > maxBundleIDLen || idLen > uint64(len(data)-off) {
		return BundleEntry{}, 0, &BundleError{int64(start + 16), fmt.Sprintf("entry ID length %d out of range", idLen)}
	}
	id := string(data[off : off+int(idLen)])
	off += int(idLen)
	if pOff > uint64(len(data)) || size > uint64(len(data))-pOff {
		return BundleEntry{}, 0, &BundleError{int64(start), fmt.Sprintf("entry %q: payload [%#x, +%#x) beyond the bundle's %#x bytes", id, pOff, size, len(data))}
	}
	return BundleEntry{ID: id, Offset: pOff, Data: data[pOff : pOff+size]}, off, nil
}

func readU64(data []byte, off int) (uint64, bool) {
	if off < 0 || off+8 > len(data) {
		return 0, false
	}
	return binary.LittleEndian.Uint64(data[off:]), true
}
