package object

import (
	"sync"
	"syscall"
	"unsafe"
)

// Buffers for decompressed sections. A section of n bytes is decompressed
// once into n bytes allocated once: an anonymous private mapping for big
// sections, so that the pages cost nothing until the decompressor writes
// them, nothing has to be cleared first, and the garbage collector neither
// scans nor counts them. Object.Close unmaps them.

// anonMinSize is the size from which a section gets its own mapping.
const anonMinSize = 256 << 10

// AnonMapped records the mappings allocSection made, by their first byte.
var AnonMapped sync.Map // uintptr → []byte

// allocSection returns a zeroed buffer of n bytes.
func allocSection(n int) ([]byte, error) {
	if n < anonMinSize {
		return make([]byte, n), nil
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, err
	}
	AnonMapped.Store(uintptr(unsafe.Pointer(unsafe.SliceData(b))), b)
	return b, nil
}

// freeSection releases a buffer from allocSection; other slices are left
// to the garbage collector.
func freeSection(b []byte) {
	if len(b) == 0 {
		return
	}
	if m, ok := AnonMapped.LoadAndDelete(uintptr(unsafe.Pointer(unsafe.SliceData(b)))); ok {
		syscall.Munmap(m.([]byte))
	}
}
