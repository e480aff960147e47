// Package runtimemsg reads what a language runtime or a sanitizer left
// when it stopped the program: a Go or Rust panic, a CPython fatal error,
// a failed libstdc++ assertion or debug-mode check, the JVM's signal
// handler, and the reports of AddressSanitizer, UBSan (and its traps and
// CFI checks), ThreadSanitizer, MemorySanitizer and LeakSanitizer. It
// recognises each by its functions on the crashing stack and reads its
// message from the process's memory (the arguments a caller set up, the
// report a runtime was writing), and sets the kind, message, summary and
// evidence of the classification in progress.
//
// Package classify drives it (a Reader per question) and gives it, through
// Host, what only the whole classification knows: where the crash is, the
// frame that is the program's own. It never imports classify.
package runtimemsg

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/model"
)

// Process is the crashed process's memory and symbols (classify.Process).
type Process interface {
	// ReadMemory reads the process's memory at addr; it returns how many
	// bytes it read and an error when that is fewer than len(p).
	ReadMemory(addr uint64, p []byte) (int, error)
	// SymbolAddress returns the run-time address of a global symbol by its
	// (mangled) name.
	SymbolAddress(name string) (uint64, bool)
}

// Host is what the classification in progress knows beyond the crashing
// stack and the process's memory.
type Host interface {
	// Where names the crash's place for a summary: the culprit frame.
	Where() string
	// CrashPoint is the index of the first frame that is not runtime
	// machinery (where the crash is), -1 when there is none.
	CrashPoint() int
	// HasFrame finds the first frame past the handler whose base name is
	// in set.
	HasFrame(set map[string]bool) (model.Frame, bool)
	// X86 reports whether the crash is on x86-64 (or of unknown
	// architecture).
	X86() bool
	// ReadCString reads a NUL-terminated string of at most max bytes.
	ReadCString(addr uint64, max int) (string, bool)
	// ExitTime reports whether the crashing stack runs exit handlers.
	ExitTime() bool
}

// Reader reads one crash's runtime and sanitizer messages into its
// classification.
type Reader struct {
	c      *model.Crash
	p      Process
	cls    *model.Classification
	frames []model.Frame // the crashing thread's frames
	start  int           // first frame past a re-raising handler
	// noForeignNote keeps Host.Where from naming the library the crash is
	// inside, when the summary says it another way.
	noForeignNote *bool
	host          Host
}

// New is a Reader of crash c's messages, which writes into cls: frames
// are the crashing thread's, start the first past a re-raising handler.
func New(c *model.Crash, p Process, cls *model.Classification, frames []model.Frame, start int, noForeignNote *bool, host Host) *Reader {
	return &Reader{c: c, p: p, cls: cls, frames: frames, start: start, noForeignNote: noForeignNote, host: host}
}

// evidence appends one line of evidence.
func (a *Reader) evidence(format string, args ...any) {
	a.cls.Evidence = append(a.cls.Evidence, fmt.Sprintf(format, args...))
}

func (a *Reader) where() string                                    { return a.host.Where() }
func (a *Reader) crashPoint() int                                  { return a.host.CrashPoint() }
func (a *Reader) hasFrame(set map[string]bool) (model.Frame, bool) { return a.host.HasFrame(set) }
func (a *Reader) x86() bool                                        { return a.host.X86() }
func (a *Reader) readCString(addr uint64, max int) (string, bool) {
	return a.host.ReadCString(addr, max)
}
func (a *Reader) exitTime() bool { return a.host.ExitTime() }
