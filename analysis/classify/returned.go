package classify

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/model"
)

// A crash handler that catches a fault, calls raise() and returns
// (libgfortran's, Open MPI's, R's, many crash reporters') leaves no frame
// of its own: the handler blocks its signal, so raise() only makes it
// pending, and the kernel delivers it once the handler's sigreturn has
// restored the interrupted context. The core then records SI_TKILL from
// the process's own pid, with the pc still on the faulting instruction.
// The handler's signal frame is still in the stack memory below %rsp (no
// user code ran after sigreturn): it says what the CPU raised. Without
// it, the instruction at the pc says what it would fault on.

// sigframeSearch is how far below the stack pointer the kernel puts a
// handler's signal frame: the 128-byte red zone, the XSAVE area (up to
// about 11 KiB with AMX), the frame itself (arch/x86/kernel/signal.c
// get_sigframe).
const sigframeSearch = 16 << 10

// handlerReturned reports whether the fatal signal is one the process
// sent itself while no frame on its stack sends signals: no handler frame
// (that is the re-raise within the handler, reraiseStart), no abort(),
// and the pc is not just past the syscall instruction of raise(), kill()
// or pthread_kill(), where a signal sent by the thread itself arrives.
func (a *analyzer) handlerReturned(f *fault) bool {
	if !f.sent || !a.sentByItself(f) || a.start != 0 || a.signalFrame(0) >= 0 || len(a.frames) == 0 {
		return false
	}
	if a.abortFramesPresent() || f.regs == nil || a.p == nil || !a.x86() {
		return false
	}
	switch f.signo {
	case sigSEGV, sigBUS, sigFPE, sigILL, sigTRAP, sigABRT:
	default:
		return false // SIGXFSZ is sent as SI_USER from the process itself
	}
	if nr, ok := f.regs["orig_rax"]; ok {
		// The system call the thread was in when the signal arrived
		// (NT_PRSTATUS orig_rax): raise() blocks signals, calls tgkill and
		// unblocks them, so its signal arrives in tgkill or rt_sigprocmask,
		// and one another thread sent arrives in whatever call the thread
		// made; after a handler's rt_sigreturn the kernel sets it to -1
		// (arch/x86/kernel/signal.c restore_sigcontext), as it is for a
		// thread in no system call.
		return nr == notInSyscall
	}
	var before [2]byte
	n, _ := a.p.ReadMemory(f.pc-2, before[:])
	if n == 2 && before[0] == 0x0f && before[1] == 0x05 {
		return false // right after a syscall: likely the thread's own raise()
	}
	return n == 2 || a.fetchFaultAt(f.pc)
}

// notInSyscall is orig_rax of a thread in no system call (-1).
const notInSyscall = ^uint64(0)

// fetchFaultAt reports whether nothing is mapped at pc (a jump there
// faults on the fetch).
func (a *analyzer) fetchFaultAt(pc uint64) bool {
	_, mapped, known := a.mappingAt(pc)
	return known && !mapped
}

// returnedFault recovers the fault a handler re-raised and returned
// from: from its signal frame below the stack pointer, else from the
// instruction at the pc. It returns nil when neither tells (the signal
// then stays as sent by the process itself).
func (a *analyzer) returnedFault(f *fault) *fault {
	a.evidence("no handler frame is on the stack, yet %s%s was sent by the process itself while its pc %#x is no call of raise() or kill(): "+
		"a handler caught the signal, raised it again and returned, and the pending signal was delivered at the interrupted instruction",
		f.name, parenthesized(f.code), f.pc)
	if g := a.staleSigframe(f); g != nil {
		return g
	}
	if g := a.faultFromInstruction(f); g != nil {
		return g
	}
	return nil
}

// staleSigframe finds the handler's signal frame below the stack pointer:
// the struct ucontext whose saved rsp and rip are the thread's.
func (a *analyzer) staleSigframe(f *fault) *fault {
	rsp, ok := f.regs["rsp"]
	if !ok || rsp < sigframeSearch {
		return nil
	}
	lo := rsp - sigframeSearch
	buf := make([]byte, sigframeSearch)
	if n, _ := a.p.ReadMemory(lo, buf); n < len(buf) {
		return nil
	}
	rspOff, ripOff := ucMcontext+8*15, ucMcontext+8*16
	for off := len(buf) - ucSize; off >= 0; off -= 8 {
		if le64(buf[off+rspOff:]) != rsp || le64(buf[off+ripOff:]) != f.pc {
			continue
		}
		uc := lo + uint64(off)
		g, fr := a.readSigframe(uc)
		if g == nil {
			continue
		}
		g.frame = 0
		if g.sent {
			a.evidence("the handler's signal frame is still in the stack memory below %%rsp, at %#x: it records no CPU exception (trap %d%s): the signal was sent, not raised by an instruction",
				uc, fr.trapno, siginfoNote(fr.info))
			return g
		}
		a.decodeFaulting(g)
		a.evidence("the handler's signal frame is still in the stack memory below %%rsp, at %#x: it holds the original fault (%s, trap %d, error code %#x, cr2 %#x) at rip=%#x",
			uc, g.name, fr.trapno, fr.errCode, fr.cr2, g.pc)
		return g
	}
	return nil
}

// faultFromInstruction decodes the instruction at the pc and tells the
// fault it raises with these registers: an access through a NULL,
// non-canonical or unmapped address, a write to read-only memory, a jump
// to no code, a division by zero, a trap instruction.
func (a *analyzer) faultFromInstruction(f *fault) *fault {
	g := &fault{signo: f.signo, name: f.name, regs: f.regs, pc: f.pc}
	if a.fetchFaultAt(f.pc) && f.signo == sigSEGV {
		g.code, g.addr, g.hasAddr, g.addrFrom = "SEGV_MAPERR", f.pc, true, "the pc"
		a.evidence("nothing is mapped at the pc %#x: the fault was the fetch of the instruction there", f.pc)
		return g
	}
	a.decodeFaulting(g)
	if g.text == "" {
		return nil
	}
	what := ""
	switch f.signo {
	case sigSEGV:
		what = a.inferSegv(g)
	case sigFPE:
		if d, zero := a.divisor(g); zero {
			g.code, what = "FPE_INTDIV", fmt.Sprintf("its divisor %s is 0", d)
		}
	case sigILL, sigTRAP:
		if isTrapInstruction(g.bytes) {
			g.code, what = "ILL_ILLOPN", "it is a trap instruction"
		}
	}
	if what == "" {
		a.evidence("the instruction at the pc, `%s`, would not fault with these registers: what the handler caught is not in the core", g.text)
		return nil
	}
	a.evidence("the handler's signal frame is not below %%rsp; the instruction at the pc, `%s`, faults with these registers: %s", g.text, what)
	return g
}

// inferSegv gives the SIGSEGV the instruction g raises, "" when its access
// would not fault.
func (a *analyzer) inferSegv(g *fault) string {
	if !g.hasEA {
		return ""
	}
	g.addr, g.hasAddr, g.addrFrom = g.ea, true, "the effective address"
	switch {
	case g.ea < nullLimit:
		g.code = "SEGV_MAPERR"
		return fmt.Sprintf("its %s address %#x is in the unmapped first 64 KiB", orDefault(g.access, "access"), g.ea)
	case !canonical(g.ea):
		g.code, g.hasAddr = "SI_KERNEL", false
		return fmt.Sprintf("its address %#x is non-canonical", g.ea)
	}
	m, mapped, known := a.mappingAt(g.ea)
	switch {
	case !known:
		return ""
	case !mapped:
		g.code = "SEGV_MAPERR"
		return fmt.Sprintf("nothing is mapped at its address %#x", g.ea)
	case g.access == "write" && !m.Writable():
		g.code = "SEGV_ACCERR"
		return fmt.Sprintf("it writes to %#x, mapped %s", g.ea, m.Perm)
	}
	return ""
}

// isTrapInstruction reports whether code starts with ud2, ud1 or int3.
func isTrapInstruction(code []byte) bool {
	switch {
	case len(code) >= 2 && code[0] == 0x0f && (code[1] == 0x0b || code[1] == 0xb9):
		return true
	case len(code) >= 1 && code[0] == 0xcc:
		return true
	}
	return false
}

// unexplainedReturn classifies a signal re-raised by a handler that
// returned when neither its signal frame nor the instruction at the pc
// says what it caught: unknown, never "killed" (the process sent it
// itself).
func (a *analyzer) unexplainedReturn(f *fault) {
	if a.returnedCutShort(f) {
		return
	}
	a.cls.Kind = model.KindUnknown
	a.cls.Summary = fmt.Sprintf("%s was re-raised by a crash handler that returned, at %s; what the handler caught is not in the core (its signal frame is overwritten and the instruction at the pc does not fault by itself).", f.name, a.where())
}

// returnedCutShort says, when a truncated core lost the stack memory the
// handler's signal frame was in, that the kind cannot be told.
func (a *analyzer) returnedCutShort(f *fault) bool {
	in := a.c.Dump.Incomplete
	if in == nil || (!in.CrashingStackAbsent && !in.FaultingCodeAbsent) {
		return false
	}
	a.cls.Kind = model.KindUnknown
	if in.CrashingStackAbsent {
		a.evidence("the stack memory below %%rsp, where the handler's signal frame was, is cut off the core")
	}
	if in.FaultingCodeAbsent {
		a.evidence("the code at the pc %#x is cut off the core", f.pc)
	}
	a.cls.Summary = fmt.Sprintf("Unknown: %s was re-raised by a handler that returned, at %s, but the core is truncated before the memory that shows what the handler caught; get a whole core.", f.name, a.where())
	return true
}
