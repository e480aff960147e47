package object

import (
	"os"
	"syscall"
	"unsafe"
)

// Advice to the kernel about the pages of an object's file mapping
// (madvise(2)). Big debug files are read in bursts: a unit's DIEs once when
// a frame falls in it, a line program once. Once read, those pages are of no
// further use to this process, and telling the kernel so keeps the resident
// set to what is being read now, not to all the DWARF a core ever touched.

var pageSize = os.Getpagesize()

// mapped returns the page-aligned part of b that lies inside the object's
// file mapping, as offsets into it; ok is false when b is not part of the
// mapping (a decompressed section, a heap copy) or spans no whole page.
func (o *Object) mapped(b []byte) (lo, hi int, ok bool) {
	if o == nil || !o.mmap || len(b) == 0 || len(o.Data) == 0 {
		return 0, 0, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(o.Data)))
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if start < base || start-base > uintptr(len(o.Data)) || uintptr(len(b)) > uintptr(len(o.Data))-(start-base) {
		return 0, 0, false
	}
	off := int(start - base)
	lo = (off + pageSize - 1) &^ (pageSize - 1)
	hi = (off + len(b)) &^ (pageSize - 1)
	return lo, hi, lo < hi
}

// Release drops b's whole pages from this process's resident set, when b is
// part of the file mapping. The data stays valid: the mapping is read-only
// and shared, so reading b again faults the pages back in from the page
// cache (MADV_DONTNEED on a shared file mapping discards nothing).
func (o *Object) Release(b []byte) {
	if lo, hi, ok := o.mapped(b); ok {
		syscall.Madvise(o.Data[lo:hi], syscall.MADV_DONTNEED)
	}
}
