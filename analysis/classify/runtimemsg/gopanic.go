package runtimemsg

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/model"
)

// A Go program's fatal panic (GOTRACEBACK=crash, or a crash in cgo code)
// ends in runtime.fatalpanic → runtime.crash → runtime.raise(SIGABRT),
// and the Go runtime's signal handler re-raises it once more. A fault in
// Go code does not reach the core as SIGSEGV: the runtime's handler makes
// the faulting function call runtime.sigpanic, which panics (Go runtime,
// signal_unix.go sigpanic). What the panic was is in those frames.

// goPanicCauses maps the runtime function sigpanic calls to the kind it
// means: panicmem is a fault below 0x1000 (a nil pointer), panicdivide an
// integer division by zero, throw("fault") any other bad address.
var goPanicCauses = map[string]struct{ kind, what string }{
	"runtime.panicmem":      {model.KindNullDeref, "invalid memory address or nil pointer dereference"},
	"runtime.panicmemAddr":  {model.KindWildPointer, "invalid memory address"},
	"runtime.panicdivide":   {model.KindDivideByZero, "integer divide by zero"},
	"runtime.panicoverflow": {model.KindAbort, "integer overflow"},
	"runtime.throw":         {model.KindWildPointer, "unexpected fault address"},
}

// GoPanic classifies a Go runtime's fatal panic and reports whether the
// stack is one.
func (a *Reader) GoPanic() bool {
	if _, fatal := a.hasFrame(map[string]bool{"runtime.fatalpanic": true, "runtime.fatalthrow": true}); !fatal {
		return false
	}
	a.cls.Kind = model.KindPanic
	if s := a.frameIndex("runtime.sigpanic"); s >= 0 {
		cause := goPanicCauses["runtime.throw"]
		for _, f := range a.frames[a.start:s] {
			if c, ok := goPanicCauses[BaseName(f.Function)]; ok {
				cause = c
			}
		}
		a.cls.Kind = cause.kind
		a.evidence("the Go runtime turned a fault into a panic: runtime.sigpanic is on the stack, called in the faulting function's place (%s)", cause.what)
		a.cls.Summary = fmt.Sprintf("Go panic: %s in %s; the Go runtime's traceback on stderr (GOTRACEBACK) names the goroutine.", cause.what, a.where())
		return true
	}
	a.evidence("runtime.fatalpanic is on the stack: an unrecovered Go panic (or a fatal runtime error) ended the program with SIGABRT (GOTRACEBACK=crash)")
	a.cls.Summary = fmt.Sprintf("Unrecovered Go panic in %s; its message and every goroutine's stack are in the Go runtime's traceback on stderr.", a.where())
	return true
}

// frameIndex is the index of the first frame past the handler running
// function fn, or -1.
func (a *Reader) frameIndex(fn string) int {
	for i := a.start; i < len(a.frames); i++ {
		if BaseName(a.frames[i].Function) == fn {
			return i
		}
	}
	return -1
}
