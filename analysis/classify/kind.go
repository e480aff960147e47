package classify

import (
	"fmt"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// classifyKind sets Kind, Summary and the evidence from the fatal signal
// (or its absence) and the faulting instruction.
func (a *analyzer) classifyKind() {
	f := a.f
	if f == nil {
		// No fatal signal: a live process dumped with gcore (or a log
		// without one). Threads decide between hang and deadlock.
		a.cls.Kind = model.KindHang
		if a.c.Signal == nil {
			a.evidence("the core records no fatal signal: it was dumped from a live process (gcore or a watchdog)")
		}
		return
	}
	if a.policySignal(f) {
		return
	}
	if f.unexplained {
		a.unexplainedReturn(f)
		return
	}
	if f.sent && !a.sentByItself(f) {
		a.killed(f)
		return
	}
	if f.signo == sigABRT || (f.sent && a.abortFramesPresent()) {
		a.abortKind()
		return
	}
	if f.sent {
		a.killed(f)
		return
	}
	switch f.signo {
	case sigSEGV:
		a.segv(f)
	case sigBUS:
		a.bus(f)
	case sigFPE:
		a.fpe(f)
	case sigILL, sigTRAP:
		a.ill(f)
	default:
		a.evidence("fatal signal %s (%s)", f.name, f.code)
	}
}

// sentByItself reports whether the process sent its fatal signal to
// itself (raise, abort, pthread_kill); false when another process sent it
// or the sender is unknown.
func (a *analyzer) sentByItself(f *fault) bool {
	return f.hasSender && (f.sender == a.c.Dump.PID || a.c.Dump.PID == 0)
}

// killed: the fatal signal was sent (kill, tgkill, sigqueue), not raised
// by the CPU: there is no faulting instruction, and the stacks show where
// the process was when the signal arrived.
func (a *analyzer) killed(f *fault) {
	a.cls.Kind = model.KindKilled
	how := sendCall[f.code]
	var by string
	switch {
	case f.hasSender && a.sentByItself(f):
		by = "raised by the process itself"
	case f.hasSender:
		by = fmt.Sprintf("sent by pid %d", f.sender)
		if f.hasUID {
			by += fmt.Sprintf(" (uid %d)", f.senderUID)
		}
	case f.originUnknown:
		by = "sent by another process or raised by the program (the handler that re-raised it took no siginfo, so the sender is not recorded)"
	default:
		by = "sent by a process"
	}
	if how != "" {
		by += " with " + how
	}
	a.evidence("%s%s was %s, not raised by a CPU fault: no instruction faulted", f.name, parenthesized(f.code), by)
	a.cls.Summary = fmt.Sprintf("Killed: %s was %s; the stacks show where the process was when it arrived — %s. Find what sent it (a timeout, a watchdog, a job scheduler or a user).",
		f.name, by, a.where())
}

// sendCall names the call that sends a signal with each si_code.
var sendCall = map[string]string{"SI_USER": "kill(2)", "SI_TKILL": "tgkill(2)", "SI_QUEUE": "sigqueue(3)",
	"SI_TIMER": "a POSIX timer", "SI_MESGQ": "a message queue notification", "SI_ASYNCIO": "AIO completion"}

// memBase returns the memory operand's base register and its value.
func (f *fault) memBase() (string, uint64, bool) {
	if len(f.memRegs) == 0 || f.regs == nil {
		return "", 0, false
	}
	r := f.memRegs[0]
	if r == "rip" {
		return "", 0, false
	}
	v, ok := f.regs[r]
	return r, v, ok
}

// instructionEvidence records the faulting instruction and its operand.
func (a *analyzer) instructionEvidence(f *fault) {
	if f.text == "" {
		return
	}
	s := fmt.Sprintf("faulting instruction at %#x: `%s`", f.pc, f.text)
	if f.mem != "" {
		s += fmt.Sprintf(" (%s of memory operand %s", orDefault(f.access, "access"), f.mem)
		if f.hasEA {
			s += fmt.Sprintf(", effective address %#x", f.ea)
		}
		s += ")"
	}
	a.evidence("%s", s)
	for _, r := range f.memRegs {
		if v, ok := f.regs[r]; ok && r != "rip" {
			a.evidence("%%%s = %#x%s", r, v, describeValue(v, f.size))
		}
	}
}

// describeValue annotates a register value: NULL, poison, and alignment
// for a pointer that an access of size bytes (0: unknown) used; a byte
// access says nothing of a pointer's alignment.
func describeValue(v uint64, size int) string {
	switch {
	case v == 0:
		return " (NULL)"
	case v < nullLimit:
		return " (a small integer, not a pointer)"
	case !canonical(v):
		return " (non-canonical: not a valid x86-64 address)"
	}
	if p, ok := matchPoison(v); ok {
		return " (" + p.what + ")"
	}
	if v%8 != 0 && size != 1 && size != 2 && size != 4 {
		return fmt.Sprintf(" (not 8-byte aligned: %#x mod 8 = %d)", v, v%8)
	}
	return ""
}

// stackOverflow reports a fault at the stack pointer's guard gap, or an
// unbounded recursion, as a stack overflow.
func (a *analyzer) stackOverflow(f *fault, addr uint64, hasAddr bool) bool {
	// Within 1 MiB below the stack pointer (a large frame's first touch)
	// or a page above it (a push or a store into the frame just made,
	// when the stack pointer itself already left the stack).
	rsp, ok := f.regs["rsp"]
	if esp, is32 := f.regs["esp"]; is32 && !ok {
		rsp, ok = esp, true // an i386 process
	}
	near := ok && hasAddr && addr < rsp+4096 && addr+1<<20 > rsp
	cycle, depth := a.recursion()
	if !near && depth < 1000 {
		return false
	}
	a.cls.Kind = model.KindStackOverflow
	switch {
	case near && addr < rsp:
		a.evidence("the fault address %#x is %d bytes below the stack pointer %%rsp = %#x: the thread ran off the end of its stack into the guard page", addr, rsp-addr, rsp)
	case near:
		a.evidence("the fault address %#x is %d bytes above the stack pointer %%rsp = %#x and not mapped: the stack pointer has already left the stack, into the guard page", addr, addr-rsp, rsp)
	}
	if depth > 0 {
		a.evidence("recursion: the cycle %s repeats %d times (%d frames on the stack)", strings.Join(cycle, " → "), depth, len(a.frames))
		a.cls.Summary = fmt.Sprintf("Stack overflow: unbounded recursion through %s (%d levels) exhausted the stack; add a base case or depth limit, or make it iterative.", strings.Join(cycle, " → "), depth)
	} else {
		a.cls.Summary = fmt.Sprintf("Stack overflow in %s: the stack ran out (large locals or alloca); raise the limit (ulimit -s, pthread_attr_setstacksize) or move the data to the heap.", a.where())
	}
	return true
}

// recursion finds the shortest cycle of function names that repeats from
// the top of the crashing stack, and how many times it repeats.
func (a *analyzer) recursion() ([]string, int) {
	names := make([]string, 0, len(a.frames))
	for _, f := range a.frames[a.start:] {
		names = append(names, baseName(f.Function))
	}
	best, bestDepth := []string(nil), 0
	for period := 1; period <= 8 && period*4 <= len(names); period++ {
		for off := 0; off < min(4, len(names)-period); off++ {
			n := off
			for n+period < len(names) && names[n] == names[n+period] {
				n++
			}
			reps := (n-off)/period + 1
			if reps >= 16 && reps > bestDepth {
				best, bestDepth = names[off:off+period], reps
			}
		}
	}
	if bestDepth == 0 {
		return nil, 0
	}
	return best, bestDepth
}

func (a *analyzer) bus(f *fault) {
	a.cls.Kind = model.KindBusError
	a.instructionEvidence(f)
	switch f.code {
	case "BUS_ADRALN":
		a.evidence("BUS_ADRALN: misaligned access at %#x", f.addr)
		a.cls.Summary = fmt.Sprintf("Bus error: %s made a misaligned access at %#x.", a.where(), f.addr)
	case "BUS_ADRERR", "BUS_OBJERR":
		a.evidence("%s at %#x: the page exists in the mapping but not in its backing object", f.code, f.addr)
		a.cls.Summary = fmt.Sprintf("Bus error: %s touched %#x past the end of a memory-mapped file (truncated while mapped) or of exhausted shared memory (/dev/shm, hugetlbfs).", a.where(), f.addr)
	case "BUS_MCEERR_AR", "BUS_MCEERR_AO":
		a.evidence("%s: the hardware reported an uncorrectable memory error at %#x", f.code, f.addr)
		a.cls.Summary = "Bus error: hardware memory error (machine check); check the node's memory, not the code."
	default:
		rbp, ok := f.regs["rbp"]
		if f.hasEA && !canonical(f.ea) {
			a.evidence("the effective address %#x is non-canonical; an access through %%rsp or %%rbp with a non-canonical address raises a stack-segment fault (#SS), which the kernel reports as SIGBUS", f.ea)
		}
		if ok {
			if p, ok := matchPoison(rbp); ok {
				a.evidence("%%rbp = %#x is %s: the frame pointer was restored from a clobbered stack slot", rbp, p.what)
				a.cls.Summary = fmt.Sprintf("Stack buffer overflow: %s's saved frame pointer was overwritten (%%rbp = %#x), and its next access through %%rbp faulted; look for an unbounded copy into a local array.", a.where(), rbp)
				return
			}
		}
		a.cls.Summary = fmt.Sprintf("Bus error in %s (%s).", a.where(), f.code)
	}
}

func (a *analyzer) fpe(f *fault) {
	a.instructionEvidence(f)
	switch f.code {
	case "FPE_INTDIV", "FPE_FLTDIV":
		a.cls.Kind = model.KindDivideByZero
		if d, ok := a.divisor(f); ok {
			a.evidence("the divisor %s = 0", d)
		}
		a.cls.Summary = fmt.Sprintf("Division by zero in %s: the divisor is 0; guard the division or fix the count it divides by.", a.where())
	case "FPE_INTOVF":
		a.cls.Kind = model.KindDivideByZero
		a.evidence("FPE_INTOVF: the quotient overflows (INT_MIN / -1)")
		a.cls.Summary = fmt.Sprintf("Integer division overflow in %s (INT_MIN / -1).", a.where())
	default:
		a.evidence("%s: a trapped floating-point exception (the program enabled FP traps with feenableexcept)", f.code)
		a.cls.Summary = fmt.Sprintf("Floating-point exception %s in %s.", f.code, a.where())
	}
}

// divisor names the division's operand and confirms it reads 0.
func (a *analyzer) divisor(f *fault) (string, bool) {
	if !strings.Contains(f.text, "div") {
		return "", false
	}
	if f.mem != "" && f.hasEA {
		size := 4
		op := strings.Fields(f.text)[0]
		switch op[len(op)-1] {
		case 'q':
			size = 8
		case 'w':
			size = 2
		case 'b':
			size = 1
		}
		v, ok := a.readUint64(f.ea)
		if !ok {
			return "", false
		}
		if size < 8 {
			v &= 1<<(8*size) - 1
		}
		return fmt.Sprintf("%s (at %#x)", f.mem, f.ea), v == 0
	}
	fields := strings.Fields(f.text)
	if len(fields) == 2 && strings.HasPrefix(fields[1], "%") {
		r := reg64(strings.TrimPrefix(fields[1], "%"))
		v, ok := f.regs[r]
		return "%" + strings.TrimPrefix(fields[1], "%"), ok && (v == 0 || uint32(v) == 0)
	}
	return "", false
}

func (a *analyzer) ill(f *fault) {
	a.cls.Kind = model.KindIllegalInstruction
	code := f.bytes
	if len(code) == 0 && a.p != nil && f.pc != 0 {
		b := make([]byte, 16)
		if n, _ := a.p.ReadMemory(f.pc, b); n > 0 {
			code = b[:n]
		}
	}
	if len(code) > 0 {
		a.evidence("instruction bytes at %#x: % x", f.pc, code[:min(len(code), 8)])
	}
	// Skip legacy prefixes to find the opcode.
	i := 0
	for i < len(code) && (code[i] == 0x66 || code[i] == 0xf2 || code[i] == 0xf3 || code[i] == 0x67 || code[i]&0xf0 == 0x40) {
		i++
	}
	op := code[i:]
	if a.runtimes().SanitizerTrap(code) {
		return
	}
	switch {
	case len(op) >= 2 && op[0] == 0x0f && op[1] == 0x0b:
		a.evidence("`ud2`: a deliberate trap (__builtin_trap, or the compiler's code for unreachable or undefined behaviour)")
		a.cls.Summary = fmt.Sprintf("Deliberate trap (ud2) in %s: the program asked to crash here — an abort path, __builtin_unreachable reached, or a sanitizer/-ftrapv check.", a.where())
	case len(op) >= 1 && op[0] == 0xcc:
		a.evidence("`int3`: a breakpoint trap compiled into the program (__builtin_debugtrap, raise(SIGTRAP) or a debugger's leftover)")
		a.cls.Summary = fmt.Sprintf("Deliberate breakpoint trap (int3) in %s.", a.where())
	case len(op) >= 1 && op[0] == 0x62:
		a.evidence("EVEX prefix 0x62: an AVX-512 instruction")
		a.cls.Summary = fmt.Sprintf("CPU feature mismatch: %s executes an AVX-512 instruction this CPU does not have; the binary was built for a newer CPU (-march) — rebuild for the target or dispatch on cpuid.", a.where())
	case len(op) >= 1 && (op[0] == 0xc4 || op[0] == 0xc5):
		a.evidence("VEX prefix %#x: an AVX/AVX2/FMA/BMI instruction", op[0])
		a.cls.Summary = fmt.Sprintf("CPU feature mismatch: %s executes an AVX-family instruction this CPU lacks; the binary was built with a -march the machine does not meet.", a.where())
	default:
		a.cls.Summary = fmt.Sprintf("Illegal instruction in %s (%s): jumped into data, or a CPU feature mismatch.", a.where(), f.code)
	}
}

// where names the culprit frame for summaries: "sum_prefix (null_inline.cpp:25)".
func (a *analyzer) where() string {
	i := a.cls.CulpritFrame
	if i < 0 || i >= len(a.frames) {
		if len(a.frames) > 0 {
			return a.frameName(a.frames[0])
		}
		return "the crashing thread"
	}
	f := a.frames[i]
	name := f.Function
	if name == "" || len(name) > 60 {
		name = a.frameName(f)
	}
	if name == "??" && a.jitCode(i) {
		return fmt.Sprintf("code at %#x that no loaded file maps (JIT-compiled or generated code)", f.Addr)
	}
	return describeFrame(f, name) + a.foreignNote()
}

func describeFrame(f model.Frame, name string) string {
	if f.File != "" && f.Line > 0 {
		return fmt.Sprintf("%s (%s:%d)", name, shortFile(f.File), f.Line)
	}
	return name
}

func shortFile(f string) string {
	if i := strings.LastIndex(f, "/"); i >= 0 {
		return f[i+1:]
	}
	return f
}

func (a *analyzer) defaultSummary() string {
	if a.f != nil {
		return fmt.Sprintf("%s in %s.", a.f.name, a.where())
	}
	return "No fatal signal recorded."
}
