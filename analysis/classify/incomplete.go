package classify

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/model"
)

// A truncated core (model.Dump.Incomplete) may have lost what a kind rests
// on: the signal's details, the crashing thread's registers, its stack or
// the faulting code. No kind is claimed from data that is not in the file.

// cutBeforeSignal sets kind unknown when the notes are cut before the
// crashing thread's registers or the signal's details (NT_SIGINFO), and
// reports whether it did. Without si_code a signal sent by kill cannot be
// told from a fault, and without si_addr a NULL from a wild pointer.
func (a *analyzer) cutBeforeSignal() bool {
	in := a.c.Dump.Incomplete
	if in == nil || !in.NotesCut {
		return false
	}
	const getWhole = "get a whole core (raise `ulimit -c`, check the disk the core was written to)"
	sig := a.c.Signal
	switch {
	case len(a.c.Threads) == 0:
		a.evidence("the core's notes are cut short before the first thread's registers and signal (NT_PRSTATUS): " +
			"whether the process crashed, was killed or was dumped while running is not in the file")
		a.cls.Summary = "Unknown: the core is truncated inside its notes, before any thread's registers or signal; " + getWhole + "."
	case sig != nil && sig.Code == "":
		a.evidence("%s is recorded (pr_cursig in NT_PRSTATUS), but the notes are cut short before its details (NT_SIGINFO): "+
			"whether a fault raised it or a process sent it, and the fault address, are not in the file", sig.Name)
		a.cls.Summary = fmt.Sprintf("Unknown: the process ended on %s in %s, but the core is truncated before the signal's details, "+
			"so what kind of crash it was cannot be told; %s.", sig.Name, a.where(), getWhole)
	default:
		return false
	}
	a.cls.Kind = model.KindUnknown
	return true
}

// noteCutData adds, once the kind is chosen, which of the data it could
// rest on the truncation removed: the faulting code, the crashing stack.
func (a *analyzer) noteCutData() {
	in, f := a.c.Dump.Incomplete, a.f
	if in == nil || f == nil {
		return
	}
	if in.FaultingCodeAbsent {
		a.evidence("the code at the crashing pc %#x is cut off the core: the kind rests on the signal's details and the registers alone", f.pc)
	}
	if !in.CrashingStackAbsent {
		return
	}
	a.evidence("the crashing thread's stack is cut off the core: its callers are unknown, and with them the culprit and the crash context")
	switch a.cls.Kind {
	case model.KindAbort:
		a.cls.Summary = fmt.Sprintf("%s raised by the process itself, but its stack is cut off the core: why it aborted "+
			"(a failed assertion, an uncaught exception, a heap check) cannot be read; get a whole core.", f.name)
	case model.KindStackOverflow:
		a.cls.Summary = fmt.Sprintf("Stack overflow in %s: the fault is at the stack pointer, but the stack is cut off the core, "+
			"so whether unbounded recursion or large locals exhausted it cannot be read; get a whole core.", a.where())
	}
}
