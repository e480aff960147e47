package classify

import (
	"github.com/faultline-dev/faultline/analysis/classify/runtimemsg"
	"github.com/faultline-dev/faultline/analysis/model"
)

// The readers of runtime and sanitizer messages are package runtimemsg;
// these are the helpers classify shares with them.
var (
	baseName  = runtimemsg.BaseName
	le64      = runtimemsg.Le64
	parseHex  = runtimemsg.ParseHex
	canonical = runtimemsg.Canonical
	orDefault = runtimemsg.OrDefault
)

// nullLimit is the size of the unmapped region at address zero
// (runtimemsg.NullLimit).
const nullLimit = runtimemsg.NullLimit

// runtimes is a reader of the crash's runtime and sanitizer messages,
// writing into this classification.
func (a *analyzer) runtimes() *runtimemsg.Reader {
	return runtimemsg.New(a.c, a.p, a.cls, a.frames, a.start, &a.noForeignNote, runtimeHost{a})
}

// runtimeHost is runtimemsg.Host: what the readers ask of the
// classification in progress.
type runtimeHost struct{ a *analyzer }

func (h runtimeHost) Where() string                                    { return h.a.where() }
func (h runtimeHost) CrashPoint() int                                  { return h.a.crashPoint() }
func (h runtimeHost) HasFrame(set map[string]bool) (model.Frame, bool) { return h.a.hasFrame(set) }
func (h runtimeHost) X86() bool                                        { return h.a.x86() }
func (h runtimeHost) ReadCString(addr uint64, max int) (string, bool) {
	return h.a.readCString(addr, max)
}
func (h runtimeHost) ExitTime() bool { return h.a.exitTime() }
