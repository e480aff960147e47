package cursor

import (
	"fmt"
	"strings"
)

// NoOffset is FormatError.Off for a problem that has no byte offset.
const NoOffset = -1

// FormatError is malformed input met by one of analysis's parsers of
// untrusted bytes (ELF cores, DWARF and frame sections, cubins): which
// format or section it was, in which file, at which offset, and what is
// wrong. elfcore, debuginfo/object, cuda and unwind/frame name it FormatError too
// (aliases), so errors.As with any of those names finds it.
type FormatError struct {
	Format string // "elfcore", ".debug_info", ".eh_frame", "ELF section header"…; may be empty
	Path   string // the file, when the parser knows it
	Off    int64  // file or section offset; NoOffset when there is none
	Msg    string // what is wrong
	Err    error  // the error that caused it, if any
}

// Error reads "PATH FORMAT: offset 0x10: MSG", leaving out what is unknown.
func (e *FormatError) Error() string {
	parts := make([]string, 0, 3)
	if where := strings.TrimSpace(e.Path + " " + e.Format); where != "" {
		parts = append(parts, where)
	}
	if e.Off >= 0 {
		parts = append(parts, fmt.Sprintf("offset %#x", e.Off))
	}
	msg := e.Msg
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return strings.Join(append(parts, msg), ": ")
}

// Unwrap returns the error that caused this one.
func (e *FormatError) Unwrap() error { return e.Err }
