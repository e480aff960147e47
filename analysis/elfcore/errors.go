package elfcore

import (
	"errors"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// ErrClosed is returned by memory reads on a Core after Close.
var ErrClosed = errors.New("elfcore: core is closed")

// FormatError is a fatal problem with the core file: it is not ELF, not a
// core, or for a machine this package does not support. Format is
// "elfcore", Off the file offset the problem was found at (cursor.NoOffset
// when there is none). It is analysis's one FormatError type.
type FormatError = cursor.FormatError

// Problem is a non-fatal issue found while reading the core: a truncated
// note, a segment that extends past the end of the file, overlapping
// segments, and so on. The core still opens; the affected data is partial.
type Problem struct {
	Off int64  // file offset the problem was found at
	Msg string // what is wrong
}

func (p Problem) String() string {
	return fmt.Sprintf("%s at offset %#x", p.Msg, p.Off)
}

// MemoryError reports that process memory at Addr is not available in the
// core: it lies outside every PT_LOAD segment, or inside a segment's memory
// size but beyond the bytes that were dumped to the file (p_filesz).
type MemoryError struct {
	Addr uint64
	// NotDumped is true when Addr is inside a segment whose contents the
	// kernel did not write (for example read-only file-backed text that
	// coredump_filter excluded), false when no segment covers Addr.
	NotDumped bool
}

func (e *MemoryError) Error() string {
	if e.NotDumped {
		return fmt.Sprintf("elfcore: memory at %#x was not dumped into the core", e.Addr)
	}
	return fmt.Sprintf("elfcore: address %#x is not in any core segment", e.Addr)
}
