package native

import (
	"fmt"
	"sort"
	"strings"

	"github.com/faultline-dev/faultline/analysis/debuginfo/symbolize"
	"github.com/faultline-dev/faultline/analysis/elfcore"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/unwind"
)

// crash builds the model: every thread unwound and symbolized, the signal,
// the faulting instruction, the modules, and the problems met on the way.
func (p *Process) crash(path string) *model.Crash {
	core := p.core
	c := &model.Crash{Schema: model.Schema, Dump: model.Dump{Path: path, Format: "elf-core", Arch: archName(core.Machine)}}
	if p.exe != nil {
		c.Dump.Executable = p.exe.path
	} else if fn := core.ExecFn(); fn != "" {
		c.Dump.Executable = fn
	}
	if pi := core.Process; pi != nil {
		c.Dump.PID = pi.PID
		c.Dump.Command = strings.TrimSpace(pi.Args)
		if c.Dump.Command == "" {
			c.Dump.Command = pi.Fname
		}
	}
	c.Signal = p.signal()
	c.Dump.Incomplete = p.incomplete()

	u := unwind.NewUnwinder(p, p, unwind.Options{MaxFrames: p.opt.MaxFrames})
	sym := newSymbolizer(p)
	total := len(core.Threads)
	for i := range core.Threads {
		if p.opt.Progress != nil {
			p.opt.Progress(fmt.Sprintf("unwinding thread %d of %d", i+1, total), i, total)
		}
		t := &core.Threads[i]
		th := model.Thread{ID: t.LWP, Crashed: i == 0 && c.Signal != nil}
		named, start, ok := threadRegs(t)
		if !ok {
			p.problem("", "thread %d has no registers in the core", t.LWP)
			c.Threads = append(c.Threads, th)
			continue
		}
		frames, stop := u.Unwind(start)
		th.Frames, th.Truncated = sym.frames(frames, stop)
		if th.Crashed && len(th.Frames) > 0 {
			th.Frames[0].Regs = named
		}
		c.Threads = append(c.Threads, th)
		if i == 0 && th.Crashed {
			c.CrashingThreadID = th.ID
			c.Instruction = p.instruction(core.Threads[0], th)
			if p.opt.OnCrashingThread != nil && total > 1 {
				partial := *c
				partial.Threads = append([]model.Thread(nil), c.Threads...)
				partial.Modules = p.modelModules()
				partial.Problems = append([]model.Problem{}, p.problems...)
				p.opt.OnCrashingThread(&partial)
			}
		}
	}
	if msg := u.Budget(); msg != "" {
		p.problem("", "%s: the stacks of the threads reached after it are cut short", msg)
	}
	c.Modules = p.modelModules()
	p.reportMissingDebug(c)
	c.Problems = p.problems
	if c.Problems == nil {
		c.Problems = []model.Problem{}
	}
	return c
}

// signal reads the fatal signal from NT_SIGINFO, else from the first
// thread's pr_cursig. A core written by gcore has neither.
func (p *Process) signal() *model.Signal {
	core := p.core
	if si := core.Signal; si != nil && si.Signo != 0 {
		s := &model.Signal{Number: int(si.Signo), Name: model.SignalName(int(si.Signo)), Code: model.SignalCodeName(int(si.Signo), si.Code)}
		if model.SignalHasAddress(int(si.Signo), si.Code) || (si.Signo == 11 && si.Code == 0x80) {
			s.Address = hexAddr(si.Addr)
		}
		if si.Signo == 31 && si.Code == 1 { // SIGSYS, SYS_SECCOMP
			s.Syscall = model.NewSyscall(int(si.Syscall), si.Arch)
			s.Syscall.CallAddress = hexAddr(si.Addr)
		}
		if si.Code <= 0 {
			s.Sender = int(si.Pid)
			uid := int(si.Uid)
			s.SenderUID = &uid
		}
		return s
	}
	if len(core.Threads) > 0 && core.Threads[0].Signal != 0 {
		n := core.Threads[0].Signal
		return &model.Signal{Number: n, Name: model.SignalName(n)}
	}
	return nil
}

// instruction decodes the crashing thread's faulting instruction.
func (p *Process) instruction(t elfcore.Thread, th model.Thread) *model.Instruction {
	named, _, ok := threadRegs(&t)
	if !ok {
		return nil
	}
	pc := pcOf(named)
	in := &model.Instruction{PC: hexAddr(pc), Registers: map[string]string{}}
	for k, v := range named {
		in.Registers[k] = hexAddr(v)
	}
	d, n, err := p.decodeAt(pc, named)
	if n == 0 {
		in.Text = "(code not readable)"
		return in
	}
	if err != nil {
		in.Text = fmt.Sprintf("(undecodable: %v)", err)
		return in
	}
	in.Text = d.Text
	in.Bytes = fmt.Sprintf("% x", d.Bytes)
	in.MemoryOperand = d.Mem
	in.Access = d.Access
	if d.HasAddress {
		in.EffectiveAddress = hexAddr(d.EffectiveAddress)
	}
	return in
}

// symbolFor names addr for branch targets in disassembly.
func (p *Process) symbolFor(addr uint64) (string, uint64) {
	m := p.moduleAt(addr)
	if m == nil || m.symbols() == nil {
		return "", 0
	}
	locs := m.symbols().Lookup(addr - m.bias)
	if len(locs) == 0 {
		return "", 0
	}
	outer := locs[len(locs)-1]
	return outer.Function, outer.FuncLow + m.bias
}

// x86Named names the x86-64 registers as gdb does.
func x86Named(r elfcore.X86_64Regs) map[string]uint64 {
	return map[string]uint64{
		"rax": r.Rax, "rbx": r.Rbx, "rcx": r.Rcx, "rdx": r.Rdx, "rsi": r.Rsi, "rdi": r.Rdi,
		"rbp": r.Rbp, "rsp": r.Rsp, "r8": r.R8, "r9": r.R9, "r10": r.R10, "r11": r.R11,
		"r12": r.R12, "r13": r.R13, "r14": r.R14, "r15": r.R15, "rip": r.Rip,
		"eflags": r.Eflags, "cs": r.Cs, "ss": r.Ss, "ds": r.Ds, "es": r.Es, "fs": r.Fs, "gs": r.Gs,
		"fs_base": r.FsBase, "gs_base": r.GsBase, "orig_rax": r.OrigRax,
	}
}

// symbolizer turns physical frames into model frames, one per inline level,
// caching lookups by pc (threads share most of their frames).
type symbolizer struct {
	p     *Process
	cache map[uint64][]model.Frame

	space     *symbolize.AddressSpace // built on first use
	tailCalls map[[2]uint64][]uint64  // by caller pc and callee pc
	// mainAt holds the lookups (by lookupKey) whose function is the one
	// DWARF marks as the program's main (DW_AT_main_subprogram).
	mainAt map[uint64]bool
	// hasMAIN, once known, says whether the executable defines MAIN__.
	hasMAIN *bool
}

func newSymbolizer(p *Process) *symbolizer {
	return &symbolizer{p: p, cache: map[uint64][]model.Frame{}, tailCalls: map[[2]uint64][]uint64{}, mainAt: map[uint64]bool{}}
}

// frames symbolizes one thread's physical frames as gdb's bt lists them:
// every inline level, "<signal handler called>" for sigreturn trampolines,
// the tail-call frames gdb infers between a frame and its caller, and
// nothing past the program's main function (mainframe.go).
func (s *symbolizer) frames(phys []unwind.Frame, stop string) ([]model.Frame, string) {
	var out []model.Frame
	for i, pf := range phys {
		if i > 0 {
			out = s.appendTailCalls(out, phys[i-1], pf)
		}
		if pf.SignalTrampoline {
			out = append(out, model.Frame{Index: len(out), PC: hexAddr(pf.PC), Addr: pf.PC, Function: model.SignalFrameName,
				Trust: model.Trust(pf.Trust), CFA: pf.CFA, Signal: true})
			continue
		}
		ra := pf.ReturnAddress
		if ra && len(out) > 0 && out[len(out)-1].Function == "runtime.sigpanic" {
			// The Go runtime's signal handler makes the faulting function
			// look as if it called runtime.sigpanic, with the faulting pc
			// itself as the return address (Go's traceback looks it up as is).
			ra = false
		}
		levels := s.lookup(pf.PC, ra)
		regs := pf.Regs.Named() // the registers recovered for this physical frame, shared by its inline levels
		for _, l := range levels {
			l.Index = len(out)
			l.Trust = model.Trust(pf.Trust)
			l.CFA = pf.CFA
			l.Regs = regs
			out = append(out, l)
		}
		if s.endsAtMain(pf.PC, ra, levels) {
			return out, ""
		}
	}
	return out, stop
}

// appendTailCalls appends the tail-call frames between callee and its
// caller. Like gdb, which looks for them only when the callee's frame was
// unwound with DWARF CFI (dwarf2_tailcall_sniffer_first), it shows each as
// one frame named after the innermost function at the tail call, with the
// caller's trust and the callee's CFA (a tail call reuses its frame).
func (s *symbolizer) appendTailCalls(out []model.Frame, callee, caller unwind.Frame) []model.Frame {
	if callee.SignalTrampoline || caller.SignalTrampoline || !caller.ReturnAddress || caller.Trust != unwind.TrustCFI {
		return out
	}
	calleePC := callee.PC
	if callee.ReturnAddress {
		calleePC--
	}
	key := [2]uint64{caller.PC, calleePC}
	pcs, ok := s.tailCalls[key]
	if !ok {
		pcs = s.addressSpace().TailCallFrames(caller.PC, calleePC)
		s.tailCalls[key] = pcs
	}
	for _, pc := range pcs {
		f := s.lookup(pc, true)[0]
		f.Index = len(out)
		f.Inlined = false
		f.Trust = model.Trust(caller.Trust)
		f.CFA = callee.CFA
		out = append(out, f)
	}
	return out
}

// addressSpace is the process's modules for tail-call searches, the
// executable first as in gdb's objfile list.
func (s *symbolizer) addressSpace() *symbolize.AddressSpace {
	if s.space == nil {
		s.space = &symbolize.AddressSpace{}
		mods := append([]*module(nil), s.p.modules...)
		sort.SliceStable(mods, func(i, j int) bool { return mods[i].isExe && !mods[j].isExe })
		for _, m := range mods {
			if syms := m.symbols(); syms != nil {
				s.space.Add(syms, m.lo, m.hi, m.bias)
			}
		}
	}
	return s.space
}

func (s *symbolizer) lookup(pc uint64, returnAddress bool) []model.Frame {
	key := lookupKey(pc, returnAddress)
	if fs, ok := s.cache[key]; ok {
		return append([]model.Frame(nil), fs...)
	}
	fs := s.symbolize(pc, returnAddress)
	s.cache[key] = fs
	return append([]model.Frame(nil), fs...)
}

// lookupKey keys the symbolizer's caches by pc and whether it is a
// return address.
func lookupKey(pc uint64, returnAddress bool) uint64 {
	key := pc << 1
	if returnAddress {
		key |= 1
	}
	return key
}

func (s *symbolizer) symbolize(pc uint64, returnAddress bool) []model.Frame {
	base := model.Frame{PC: hexAddr(pc), Addr: pc}
	m := s.p.moduleAt(pc)
	if m == nil {
		return []model.Frame{base}
	}
	base.Module = m.path
	syms := m.symbols()
	if syms == nil {
		return []model.Frame{base}
	}
	look := pc - m.bias
	if returnAddress && look > 0 {
		look--
	}
	locs := syms.Lookup(look)
	if len(locs) == 0 {
		return []model.Frame{base}
	}
	if outer := locs[len(locs)-1]; outer.Main && !outer.Inlined {
		s.mainAt[lookupKey(pc, returnAddress)] = true
	}
	out := make([]model.Frame, 0, len(locs))
	for _, l := range locs {
		f := base
		f.Function = l.Function
		f.File = l.File
		f.CompDir = l.CompDir
		f.Line = l.Line
		f.Column = l.Column
		f.Inlined = l.Inlined
		if l.FuncLow != 0 || !l.FromDWARF {
			f.Offset = pc - m.bias - l.FuncLow
		}
		out = append(out, f)
	}
	return out
}
