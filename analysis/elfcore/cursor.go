package elfcore

import (
	"encoding/binary"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// newCursor reads the fields of one structure of the core at file offset
// base: bounds-checked, its first error sticks as a FormatError of format
// "elfcore" at the file offset it met.
func newCursor(data []byte, order binary.ByteOrder, base int64) *cursor.Cursor {
	c := cursor.New(data, order, uint64(base))
	c.Format = "elfcore"
	return c
}
