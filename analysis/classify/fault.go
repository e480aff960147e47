package classify

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/analysis/disasm"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// fault is the hardware fault (or signal) that killed the process: from
// the core's siginfo and registers, or, when a handler re-raised it, from
// the siginfo and ucontext the kernel saved on the handler's signal frame.
type fault struct {
	signo   int
	name    string // "SIGSEGV"
	code    string // "SEGV_MAPERR"
	addr    uint64 // si_addr
	hasAddr bool
	regs    map[string]uint64
	pc      uint64
	frame   int // the frame index that faulted

	text     string   // the faulting instruction, AT&T
	mem      string   // its memory operand, e.g. "0x8(%rax)"
	memRegs  []string // registers the memory operand uses, base first
	ea       uint64   // the operand's effective address
	hasEA    bool
	access   string
	size     int    // bytes the memory operand accesses, 0 when unknown
	op       string // the mnemonic, Intel spelling ("MOVAPD")
	bytes    []byte
	sent     bool   // sent by a process (si_code <= 0: kill, tgkill, sigqueue), not raised by the CPU
	addrFrom string // where addr came from: "si_addr" or "cr2"

	// The sender's pid and uid, when sent and known (hasSender).
	sender, senderUID int
	hasSender         bool
	hasUID            bool
	// originUnknown: a handler re-raised a signal whose signal frame says
	// neither which CPU exception raised it nor who sent it.
	originUnknown bool
	// unexplained: a handler re-raised the signal and returned, and what
	// it caught could not be recovered.
	unexplained bool
}

// Signal numbers (asm-generic/signal.h) and si_code values (siginfo.h).
const (
	sigILL  = 4
	sigTRAP = 5
	sigABRT = 6
	sigBUS  = 7
	sigFPE  = 8
	sigKILL = 9
	sigSEGV = 11
	sigSTOP = 19
	sigXCPU = 24
	sigXFSZ = 25
	sigSYS  = 31
)

// readFault gathers the fatal signal, registers and faulting instruction.
func (a *analyzer) readFault() *fault {
	sig := a.c.Signal
	if sig == nil {
		return nil
	}
	if sig.Number == sigSTOP {
		a.evidence("the core's signal is SIGSTOP, the stop gdb's gcore uses to attach: it was dumped from a live process, not by a crash")
		return nil
	}
	if a.cls.Reraised {
		if f := a.sigframeFault(); f != nil {
			return a.nestedFault(f)
		}
	}
	f := &fault{signo: sig.Number, name: sig.Name, code: sig.Code, frame: 0}
	f.sent = strings.HasPrefix(sig.Code, "SI_") && sig.Code != "SI_KERNEL"
	if f.sent && sig.Sender != 0 {
		f.sender, f.hasSender = sig.Sender, true
	}
	if f.sent && sig.SenderUID != nil {
		f.senderUID, f.hasUID = *sig.SenderUID, true
	}
	if sig.Address != "" {
		f.addr, f.hasAddr = parseHex(sig.Address)
	}
	if len(a.frames) > 0 && a.frames[0].Regs != nil {
		f.regs = a.frames[0].Regs
	} else if in := a.c.Instruction; in != nil {
		f.regs = map[string]uint64{}
		for k, v := range in.Registers {
			if n, ok := parseHex(v); ok {
				f.regs[k] = n
			}
		}
	}
	if in := a.c.Instruction; in != nil {
		f.pc, _ = parseHex(in.PC)
		f.text, f.mem, f.access = in.Text, in.MemoryOperand, in.Access
		f.memRegs = operandRegisters(in.MemoryOperand)
		if in.EffectiveAddress != "" {
			f.ea, f.hasEA = parseHex(in.EffectiveAddress)
		}
		for _, h := range strings.Fields(in.Bytes) {
			if v, err := strconv.ParseUint(h, 16, 8); err == nil {
				f.bytes = append(f.bytes, byte(v))
			}
		}
		decode := disasm.DecodeX86_64
		if a.c.Dump.Arch == "i386" {
			decode = disasm.DecodeX86_32
		}
		if d, err := decode(f.bytes, f.pc, f.regs, nil); err == nil && len(f.bytes) > 0 && (a.x86() || a.c.Dump.Arch == "i386") {
			f.size, f.op = d.MemBytes, d.Op
		}
	} else if f.regs != nil {
		f.pc = f.regs["rip"]
		if pc, ok := f.regs["eip"]; ok {
			f.pc = pc
		}
	}
	if a.handlerReturned(f) {
		a.cls.Reraised = true
		if g := a.returnedFault(f); g != nil {
			return g
		}
		f.unexplained = true
	}
	return f
}

// x86 reports whether the crash is of an x86-64 process (or of an input
// that does not say: a log).
func (a *analyzer) x86() bool {
	return a.c.Dump.Arch == "" || a.c.Dump.Arch == "x86_64"
}

// nestedFault follows handlers that caught a signal the process raised
// itself while handling another (the Go runtime's handler, after a
// SIGSEGV sent by kill, calls crash(), whose SIGABRT its handler catches
// again): the original signal is on the next signal frame down.
func (a *analyzer) nestedFault(f *fault) *fault {
	for depth := 0; depth < 4 && f.sent && a.sentByItself(f); depth++ {
		k := a.signalFrame(a.start)
		if k <= 0 {
			break
		}
		outer := a.start
		a.start = k + 1
		g := a.sigframeFault()
		if g == nil {
			a.start = outer
			break
		}
		f = g
	}
	return f
}

// x86 exception vectors (Intel SDM Vol. 3A, Table 6-1).
const (
	trapDE = 0  // divide error
	trapBP = 3  // int3
	trapUD = 6  // invalid opcode
	trapSS = 12 // stack-segment fault
	trapGP = 13 // general protection
	trapPF = 14 // page fault
	trapAC = 17 // alignment check
)

// x86-64 rt_sigframe layout (linux/arch/x86/include/asm/sigframe.h,
// uapi/asm/sigcontext.h): the handler is entered with its return address
// (pretcode) at rsp, so its CFA is &frame->uc; struct ucontext is uc_flags,
// uc_link, stack_t (24 bytes), struct sigcontext (256 bytes), uc_sigmask:
// 304 bytes, then struct siginfo.
const (
	ucMcontext   = 40
	ucSize       = 304
	siCodeOffset = 8
	// struct sigcontext offsets of err, trapno and cr2.
	scErr         = 152
	scTrapno      = 160
	scCR2         = 176
	mcontextWords = 17 // r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip
)

var mcontextRegs = [mcontextWords]string{"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
	"rdi", "rsi", "rbp", "rbx", "rdx", "rax", "rcx", "rsp", "rip"}

// sigframeFault reads the original fault a re-raising handler caught from
// the signal frame the kernel pushed for it.
func (a *analyzer) sigframeFault() *fault {
	k := a.start - 1 // the "<signal handler called>" entry
	if k < 1 || a.p == nil {
		return nil
	}
	uc := a.frames[k-1].CFA // the handler's CFA
	if uc == 0 {
		return nil
	}
	f, fr := a.readSigframe(uc)
	if f == nil {
		return nil
	}
	f.frame = a.start
	if f.sent {
		a.evidence("a handler caught %s%s and %s: frames #0-#%d are the handler; the kernel's signal frame "+
			"at %#x records no CPU exception for it (trap %d%s): it was sent, not raised by an instruction",
			f.name, parenthesized(f.code), a.reraiseVerb(f), k-1, uc, fr.trapno, siginfoNote(fr.info))
		return f
	}
	a.decodeFaulting(f)
	a.evidence("a handler caught %s (%s) and %s: frames #0-#%d are the handler; the kernel's signal frame "+
		"at %#x holds the original fault (trap %d, error code %#x, cr2 %#x) and registers (rip=%#x)", f.name, f.code, a.reraiseVerb(f), k-1, uc, fr.trapno, fr.errCode, fr.cr2, f.pc)
	return f
}

// sigframe is what the kernel's signal frame says of the exception.
type sigframe struct {
	trapno, errCode, cr2 uint64
	info                 siginfoCopy
}

// readSigframe reads the fault recorded by the signal frame whose struct
// ucontext is at uc: the signal, how it was raised or who sent it, and
// the interrupted registers.
func (a *analyzer) readSigframe(uc uint64) (*fault, sigframe) {
	// struct sigcontext's err, trapno and cr2 say which exception the CPU
	// raised and where; the kernel fills them for every handler, while the
	// siginfo copy exists only for SA_SIGINFO handlers.
	var fr sigframe
	var ok1, ok2, ok3 bool
	fr.errCode, ok1 = a.readUint64(uc + ucMcontext + scErr)
	fr.trapno, ok2 = a.readUint64(uc + ucMcontext + scTrapno)
	fr.cr2, ok3 = a.readUint64(uc + ucMcontext + scCR2)
	if !ok1 || !ok2 || !ok3 {
		return nil, fr
	}
	f := &fault{regs: map[string]uint64{}}
	fr.info = a.handlerSiginfo(uc)
	info := fr.info
	switch {
	case info.ok && info.code <= 0:
		// Sent by a process: trapno is stale or 0, not this signal's.
		f.signo, f.code, f.sent = info.signo, model.SignalCodeName(info.signo, info.code), true
		f.sender, f.senderUID, f.hasSender, f.hasUID = info.pid, info.uid, true, true
	case trapConsistent(fr.trapno, a.c.Signal.Number, info):
		f.fromTrap(fr.trapno, fr.errCode, fr.cr2)
	case info.ok:
		f.signo, f.code = info.signo, model.SignalCodeName(info.signo, info.code)
		if model.SignalHasAddress(info.signo, info.code) {
			f.addr, f.hasAddr, f.addrFrom = info.addr, true, "the handler's si_addr"
		}
	default:
		// trapno 0 with no siginfo copy (a handler without SA_SIGINFO,
		// faulthandler's) on a signal other than SIGFPE: no CPU exception
		// raised it, so it was sent; by whom the frame does not say.
		f.signo, f.code, f.sent, f.originUnknown = a.c.Signal.Number, "", true, true
	}
	f.name = model.SignalName(f.signo)
	for i, r := range mcontextRegs {
		v, ok := a.readUint64(uc + ucMcontext + uint64(8*i))
		if !ok {
			return nil, fr
		}
		f.regs[r] = v
	}
	f.pc = f.regs["rip"]
	return f, fr
}

// fromTrap sets the signal and code the kernel raises for x86 exception
// trapno (arch/x86/kernel/traps.c, mm/fault.c).
func (f *fault) fromTrap(trapno, errCode, cr2 uint64) {
	f.signo = trapSignal[trapno]
	switch trapno {
	case trapPF:
		f.addr, f.hasAddr, f.addrFrom = cr2, true, "cr2"
		f.code = "SEGV_MAPERR"
		if errCode&1 != 0 { // page present: a protection violation
			f.code = "SEGV_ACCERR"
		}
	case trapGP, trapSS:
		f.code = "SI_KERNEL"
	case trapAC:
		f.code = "BUS_ADRALN"
	case trapDE:
		f.code = "FPE_INTDIV"
	case trapUD:
		f.code = "ILL_ILLOPN"
	case trapBP:
		f.code = "TRAP_BRKPT"
	}
}

// trapSignal is the signal each x86 exception raises.
var trapSignal = map[uint64]int{trapPF: sigSEGV, trapGP: sigSEGV, trapSS: sigBUS, trapAC: sigBUS,
	trapDE: sigFPE, trapUD: sigILL, trapBP: sigTRAP}

// trapConsistent reports whether the signal frame's trapno explains the
// signal the handler caught. Trap 0 (the divide error) is also what a
// thread that never faulted carries, so it counts only for a SIGFPE; a
// handler that turns a fault into abort() re-raises SIGABRT instead.
func trapConsistent(trapno uint64, reraised int, info siginfoCopy) bool {
	sig, ok := trapSignal[trapno]
	if !ok {
		return false
	}
	caught := reraised
	if info.ok {
		caught = info.signo
	}
	if sig == caught {
		return true
	}
	return trapno != trapDE && caught == sigABRT
}

// siginfoCopy is the struct siginfo the kernel copied onto a SA_SIGINFO
// handler's signal frame.
type siginfoCopy struct {
	signo    int
	code     int32
	pid, uid int
	addr     uint64 // si_addr, for a fault (code > 0)
	ok       bool   // the copy is there: its si_signo is the signal the core records
}

// siginfo offsets (x86-64): si_signo, si_errno, si_code, then the union,
// whose kill/rt members start with si_pid and si_uid.
const (
	siPidOffset = 16
	siUIDOffset = 20
)

// handlerSiginfo reads the siginfo copy after the handler's ucontext. A
// handler without SA_SIGINFO has none there (the bytes are old stack), so
// the copy counts only when its si_signo is the signal the core records
// and its si_code is one the kernel uses.
func (a *analyzer) handlerSiginfo(uc uint64) siginfoCopy {
	signo, ok1 := a.readUint32(uc + ucSize)
	code, ok2 := a.readUint32(uc + ucSize + siCodeOffset)
	pid, ok3 := a.readUint32(uc + ucSize + siPidOffset)
	uid, ok4 := a.readUint32(uc + ucSize + siUIDOffset)
	c := int32(code)
	if !ok1 || !ok2 || !ok3 || !ok4 || !a.handlerCaught(int(signo)) || c < -7 || c > 0x80 {
		return siginfoCopy{}
	}
	addr, _ := a.readUint64(uc + ucSize + siPidOffset)
	return siginfoCopy{signo: int(signo), code: c, pid: int(int32(pid)), uid: int(uid), addr: addr, ok: true}
}

// handlerCaught reports whether a handler that ended the process with the
// core's signal can have caught signo: the same signal re-raised, or a
// fault signal a handler turned into abort() (the JVM's, after writing its
// hs_err log).
func (a *analyzer) handlerCaught(signo int) bool {
	if signo == a.c.Signal.Number {
		return true
	}
	switch signo {
	case sigSEGV, sigBUS, sigFPE, sigILL, sigTRAP:
		return a.c.Signal.Number == sigABRT
	}
	return false
}

// reraiseVerb says how the handler ended the process after catching f.
func (a *analyzer) reraiseVerb(f *fault) string {
	if f.signo != a.c.Signal.Number {
		return "then raised " + a.c.Signal.Name
	}
	return "re-raised it"
}

func siginfoNote(info siginfoCopy) string {
	if info.ok {
		return fmt.Sprintf("; the handler's siginfo says si_code %s, si_pid %d, si_uid %d", model.SignalCodeName(info.signo, info.code), info.pid, info.uid)
	}
	return "; the handler took no siginfo (no SA_SIGINFO), so the sender is not recorded"
}

func parenthesized(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// decodeFaulting decodes the instruction at the fault's pc.
func (a *analyzer) decodeFaulting(f *fault) {
	code16 := make([]byte, 16)
	if n, _ := a.p.ReadMemory(f.pc, code16); n > 0 {
		if d, err := disasm.DecodeX86_64(code16[:n], f.pc, f.regs, nil); err == nil {
			f.text, f.mem, f.access, f.memRegs, f.bytes = d.Text, d.Mem, d.Access, d.Registers, d.Bytes
			f.size, f.op = d.MemBytes, d.Op
			f.ea, f.hasEA = d.EffectiveAddress, d.HasAddress
		}
	}
}

var regRef = lazyregexp.New(`%([a-z0-9]+)`)

// operandRegisters lists the registers an AT&T memory operand uses, base
// first, as their 64-bit names.
func operandRegisters(op string) []string {
	var out []string
	for _, m := range regRef.FindAllStringSubmatch(op, -1) {
		out = append(out, reg64(m[1]))
	}
	return out
}

// reg64 names the 64-bit register that contains r ("eax" -> "rax").
func reg64(r string) string {
	switch {
	case len(r) == 3 && r[0] == 'e':
		return "r" + r[1:]
	case strings.HasPrefix(r, "r") && (strings.HasSuffix(r, "d") || strings.HasSuffix(r, "w") || strings.HasSuffix(r, "b")) && len(r) > 2:
		return strings.TrimRight(r, "dwb")
	case len(r) == 2 && (r[1] == 'x' || r[1] == 'i' || r[1] == 'p'):
		return "r" + r
	case len(r) == 2 && (r[1] == 'l' || r[1] == 'h'):
		return "r" + r[:1] + "x"
	}
	return r
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// poison is a fill pattern an allocator or runtime writes into memory.
type poison struct {
	byteFill byte   // repeated byte, or 0
	word     uint32 // repeated 32-bit word, or 0
	freed    bool   // written on free (use-after-free), else on allocation or by data
	what     string
}

var poisons = []poison{
	{byteFill: 0xdd, freed: true, what: "CPython's freed-memory fill (DEADBYTE 0xDD, debug allocator)"},
	{word: 0xfeeefeee, freed: true, what: "the Windows heap's freed-memory fill 0xFEEEFEEE"},
	{word: 0xdeadbeef, freed: true, what: "the 0xDEADBEEF poison written into released objects"},
	{byteFill: 0x5a, freed: true, what: "jemalloc's freed-memory junk fill 0x5A"},
	{byteFill: 0x6b, freed: true, what: "the Linux slab POISON_FREE fill 0x6B"},
	{byteFill: 0xa5, freed: true, what: "the 0xA5 fill that jemalloc and debug allocators write into freed or fresh memory"},
	{byteFill: 0xcd, what: "the 0xCD fill of fresh, never-initialised heap memory (CPython CLEANBYTE, MSVC debug heap)"},
	{word: 0xbaadf00d, what: "the 0xBAADF00D fill of uninitialised heap memory"},
	{byteFill: 0x41, what: "0x41 bytes ('A'): string data written over a pointer (a buffer overflow)"},
}

// matchPoison reports the pattern v is made of, ignoring a small offset in
// the low 12 bits (a field of the poisoned pointer's target).
func matchPoison(v uint64) (poison, bool) {
	for _, p := range poisons {
		switch {
		case p.byteFill != 0:
			b := uint64(p.byteFill)
			fill := b * 0x0101010101010101
			if v>>16 == fill>>16 || (v>>32 == 0 && v>>16 == fill>>48) {
				return p, true
			}
		case p.word != 0:
			w := uint64(p.word)
			if v>>12 == (w<<32|w)>>12 || v>>12 == w>>12 {
				return p, true
			}
		}
	}
	return poison{}, false
}
