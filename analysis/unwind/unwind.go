// Package unwind recovers the call stack of a thread from its registers and
// the process's memory, the way gdb does: DWARF call frame information from
// .eh_frame and .debug_frame first (package frame, DWARF 5 §6.4), the Linux
// signal trampoline and the ucontext the kernel saved for signal frames, and
// when no CFI covers a pc, the frame-pointer chain and then a bounded stack
// scan for return addresses.
//
// Registers are numbered as DWARF numbers them for the architecture (Arch:
// AMD64 now; ARM64's table is there for the same code paths). Unwinding
// never panics on bad input: it stops and says why.
package unwind

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/faultline-dev/faultline/analysis/unwind/frame"
	"github.com/faultline-dev/faultline/analysis/unwind/op"
)

// Memory is the process's memory (core segments and mapped files).
type Memory interface {
	ReadMemory(addr uint64, p []byte) (int, error)
}

// Section is a section's bytes and its link-time address.
type Section struct {
	Data []byte
	Addr uint64
	// Index, when set, keeps the section's FDE index across processes.
	Index frame.IndexStore
}

// Module is one mapped object, as the caller found it.
type Module struct {
	Name   string
	Lo, Hi uint64 // runtime address range of its mappings
	Bias   uint64 // runtime - link-time
	// Any may be empty; .debug_frame may come from a separate debug file.
	EHFrame, EHFrameHdr, DebugFrame Section
	// Entry is the program's link-time entry point (ELF e_entry) when the
	// module is the main executable, else 0. The function holding it is the
	// outermost frame (gdb's inside_entry_func, "backtrace past-entry
	// off"), also when its CFI, as in -nostdlib programs, does not mark the
	// return address undefined.
	Entry uint64
}

// Finder maps a pc to the module containing it. It should return the same
// *Module for one object every time, so that its FDE index is built once.
type Finder interface {
	ModuleAt(pc uint64) *Module // nil when pc is in no known module
}

// Trust values: how a frame was recovered.
const (
	TrustContext      = "context"       // registers from the core (frame 0)
	TrustCFI          = "cfi"           // DWARF call frame information
	TrustFramePointer = "frame-pointer" // frame-pointer chain
	TrustScan         = "scan"          // stack scan for a return address
	TrustSignal       = "signal"        // ucontext saved by the kernel
)

// Frame is one physical frame.
type Frame struct {
	PC   uint64 // the frame's pc
	CFA  uint64 // canonical frame address (0 if unknown)
	Regs Regs   // registers as recovered for this frame
	// Trust is how this frame was recovered: TrustContext for frame 0, else
	// the method that unwound its callee.
	Trust string
	// SignalTrampoline is set when pc is the sigreturn trampoline
	// (__restore_rt): its caller shows as "<signal handler called>".
	SignalTrampoline bool
	// ReturnAddress is set when PC is a return address (symbolize at PC-1).
	// It is false for frame 0, for the frame a signal interrupted, and for the
	// trampoline frame (the kernel points its return address at the
	// trampoline's first instruction).
	ReturnAddress bool
}

// Options bound an unwind.
type Options struct {
	MaxFrames int // per thread; default DefaultMaxFrames
	// MaxTotalFrames and MaxTime bound all the unwinds of one Unwinder (one
	// dump); defaults DefaultMaxTotalFrames and DefaultMaxTime. Once either
	// is spent every later unwind stops at once; Budget says so.
	MaxTotalFrames int
	MaxTime        time.Duration
}

// Defaults of Options.
const (
	DefaultMaxFrames      = 100000
	DefaultMaxTotalFrames = 250000
	DefaultMaxTime        = 30 * time.Second
)

// Unwind unwinds one thread from its registers start. stop is "" when the
// stack ended normally: the return address is undefined per CFI, as _start
// and clone3 mark it, or it is 0 (then, as in gdb, the last frame has pc 0).
// Otherwise stop says why unwinding stopped.
//
// Unwind builds its caches afresh; to unwind several threads of a process use
// one Unwinder.
func Unwind(mem Memory, find Finder, start Regs, opt Options) (frames []Frame, stop string) {
	return NewUnwinder(mem, find, opt).Unwind(start)
}

// Unwinder unwinds threads of one process, caching each module's parsed
// call frame information. It is safe for concurrent use.
type Unwinder struct {
	mem  Memory
	find Finder
	opt  Options

	mu       sync.Mutex
	tables   map[*Module]*moduleTables
	sigtramp map[uint64]bool // per pc: is it the sigreturn trampoline?

	budget budget // frames and time left for all unwinds
}

// maxCachedPCs bounds the Unwinder's per-pc trampoline cache.
const maxCachedPCs = 1 << 16

// isSigreturn reports whether pc is at the sigreturn trampoline, caching the
// answer per pc (a deep recursion asks about the same few pcs).
func (u *Unwinder) isSigreturn(m *memReader, pc uint64) bool {
	u.mu.Lock()
	v, ok := u.sigtramp[pc]
	u.mu.Unlock()
	if ok {
		return v
	}
	v = m.arch.sigreturn(m, pc)
	u.mu.Lock()
	if len(u.sigtramp) >= maxCachedPCs {
		clear(u.sigtramp)
	}
	u.sigtramp[pc] = v
	u.mu.Unlock()
	return v
}

// moduleTables are the frame tables of one module.
type moduleTables struct {
	eh, debug *frame.Table
}

// NewUnwinder returns an Unwinder over a process's memory and modules.
func NewUnwinder(mem Memory, find Finder, opt Options) *Unwinder {
	if opt.MaxFrames <= 0 {
		opt.MaxFrames = DefaultMaxFrames
	}
	if opt.MaxTotalFrames <= 0 {
		opt.MaxTotalFrames = DefaultMaxTotalFrames
	}
	if opt.MaxTime <= 0 {
		opt.MaxTime = DefaultMaxTime
	}
	u := &Unwinder{mem: mem, find: find, opt: opt, tables: map[*Module]*moduleTables{}, sigtramp: map[uint64]bool{}}
	u.budget.frames.Store(int64(opt.MaxTotalFrames))
	return u
}

// Unwind unwinds one thread; see the package-level Unwind.
func (u *Unwinder) Unwind(start Regs) (frames []Frame, stop string) {
	if start.Arch == nil {
		start.Arch = AMD64
	}
	s := &stepper{u: u, arch: start.Arch, mem: &memReader{mem: u.mem, arch: start.Arch}}
	frames = make([]Frame, 1, 64)
	frames[0] = Frame{PC: start.PC(), Regs: start, Trust: TrustContext}
	if msg := u.budget.take(u.opt); msg != "" {
		return frames, msg
	}
	var seen signalFrames
	sameSP := 0
	for {
		cur := &frames[len(frames)-1]
		next, end, stop := s.step(cur)
		if seen.repeats(cur) {
			// gdb's frame stash (frame.c get_prev_frame_if_no_cycle): a
			// frame met before ends the stack.
			return frames[:len(frames)-1], "previous frame identical to this frame (corrupt stack?)"
		}
		if end {
			return frames, ""
		}
		if stop != "" {
			return frames, stop
		}
		if msg := u.budget.take(u.opt); msg != "" {
			return frames, msg
		}
		curSP, nextSP := cur.Regs.SP(), next.Regs.SP()
		if !cur.SignalTrampoline {
			// The stack grows down: a caller's frame is never inner to its
			// callee's, and one that does not move must change pc.
			if nextSP < curSP || (nextSP == curSP && next.PC == cur.PC) {
				return frames, "frame did not advance (corrupt stack?)"
			}
			if nextSP == curSP {
				if sameSP++; sameSP > maxSameSP {
					return frames, "frame did not advance (corrupt stack?)"
				}
			} else {
				sameSP = 0
			}
		}
		if len(frames) >= u.opt.MaxFrames {
			return frames, fmt.Sprintf("depth limit %d reached", u.opt.MaxFrames)
		}
		frames = append(frames, next)
		if next.PC == 0 && next.Trust != TrustSignal {
			// Like gdb (frame.c, get_prev_frame: "zero PC"), a caller at pc 0
			// is listed and ends the stack.
			return frames, ""
		}
	}
}

// maxSameSP bounds consecutive frames with the same stack pointer (possible
// for AArch64 leaf functions, never for long).
const maxSameSP = 16

// stepper unwinds one frame at a time.
type stepper struct {
	u    *Unwinder
	arch *Arch
	mem  *memReader
}

// step recovers cur's caller. It sets cur.CFA and cur.SignalTrampoline. end
// is true when cur is the outermost frame; stop says why unwinding cannot go
// on.
func (s *stepper) step(cur *Frame) (next Frame, end bool, stop string) {
	pc := cur.PC
	lookup := pc
	if cur.ReturnAddress && lookup > 0 {
		lookup--
	}
	mod := s.u.module(pc)
	if cur.ReturnAddress && mod != nil && s.arch.contextStart != nil && s.arch.contextStart(s.mem, pc) {
		return Frame{}, true, "" // the outermost frame of a makecontext stack
	}

	var row *frame.Row
	var fde *frame.FDE
	var cfiErr error
	if mod != nil {
		row, fde, cfiErr = s.u.rowFor(mod, s.mem, lookup)
	}

	if (fde != nil && fde.CIE.SignalFrame) || s.u.isSigreturn(s.mem, pc) {
		return s.signalFrame(cur)
	}

	if row != nil {
		next, end, err := s.cfiStep(cur, row)
		if err == nil {
			return next, end || holdsEntry(mod, fde), ""
		}
		var me *MemoryError
		if errors.As(err, &me) {
			// CFI says where the caller's registers are and they cannot be
			// read: gdb stops here too ("Cannot access memory at address").
			return Frame{}, false, me.Error()
		}
		cfiErr = err
	}

	// No usable CFI: the fallbacks.
	context := cur.Trust == TrustContext || cur.Trust == TrustSignal
	if context && mod == nil {
		// A context frame outside any module (a call through a bad pointer)
		// has not set up a frame yet: its return address is at sp.
		if next, ok := s.returnAddressAt(cur, cur.Regs.SP()); ok {
			next.Trust = TrustScan
			return next, false, ""
		}
	}
	if next, end, ok := s.framePointerStep(cur); ok {
		return next, end, ""
	}
	if context {
		// A 0 at sp of a frame with no CFI and no frame pointer: a thread
		// just born from clone3, on its empty stack (glibc's clone3 FDE
		// stops short of the instruction after its syscall). gdb's prologue
		// analyzer reads the same word and shows a frame at pc 0.
		sp := cur.Regs.SP()
		if w, err := s.mem.word(sp); err == nil && w == 0 {
			next := s.callerWith(cur, 0, sp+uint64(s.arch.PtrSize))
			next.Trust = TrustScan
			return next, false, ""
		}
	}
	if next, ok := s.scanStep(cur); ok {
		return next, false, ""
	}
	var me *MemoryError
	if errors.As(cfiErr, &me) {
		return Frame{}, false, me.Error()
	}
	where := ""
	if mod != nil {
		where = fmt.Sprintf(" (%s+0x%x)", mod.Name, pc-mod.Bias)
	}
	if cfiErr != nil && !errors.Is(cfiErr, frame.ErrNoFDE) {
		return Frame{}, false, fmt.Sprintf("no unwind info for 0x%x%s: %v", pc, where, cfiErr)
	}
	return Frame{}, false, fmt.Sprintf("no unwind info for 0x%x%s", pc, where)
}

// holdsEntry reports whether fde describes the function at the program's
// entry point.
func holdsEntry(mod *Module, fde *frame.FDE) bool {
	return mod != nil && fde != nil && mod.Entry != 0 && fde.Begin <= mod.Entry && mod.Entry < fde.End
}

// cfiStep applies a CFI row to cur (DWARF 5 §6.4.1). end is true when the
// return address is undefined.
func (s *stepper) cfiStep(cur *Frame, row *frame.Row) (Frame, bool, error) {
	a := s.arch
	ctx := &exprContext{regs: &cur.Regs, mem: s.mem}
	var cfa uint64
	if row.CFA.Expr != nil {
		v, _, err := op.Eval(row.CFA.Expr, a.Order, a.PtrSize, ctx)
		if err != nil {
			return Frame{}, false, err
		}
		cfa = v
	} else {
		r, ok := cur.Regs.Get(int(row.CFA.Reg))
		if !ok {
			return Frame{}, false, fmt.Errorf("CFA register %d unknown", row.CFA.Reg)
		}
		cfa = r + uint64(row.CFA.Offset)
	}
	cur.CFA = cfa
	ctx.cfa = cfa

	raRule := row.Rule(uint64(a.RA))
	switch raRule.Kind {
	case frame.RuleUndefined:
		return Frame{}, true, nil
	case frame.RuleUnspecified:
		// Where the return address lives in a register (AArch64's x30),
		// GCC's CIEs give it no rule at all and leaf functions never save
		// it: like gdb (dwarf2-frame.c treats unspecified registers as
		// "same value"), the caller's pc is the register's current value.
		if a.RA == a.PC {
			return Frame{}, false, fmt.Errorf("no rule for the return address")
		}
	}

	next := Frame{Regs: NewRegs(a), Trust: TrustCFI, ReturnAddress: true}
	for reg, rule := range row.Regs {
		if reg >= maxRegs || rule.Kind == frame.RuleUnspecified {
			continue
		}
		n := int(reg)
		v, ok, err := s.applyRule(cur, ctx, rule, n)
		if err != nil && n == a.RA {
			return Frame{}, false, err
		}
		if ok {
			next.Regs.Set(n, v)
		}
	}
	for _, n := range a.CalleeSaved {
		if row.Rule(uint64(n)).Kind == frame.RuleUnspecified {
			if v, ok := cur.Regs.Get(n); ok {
				next.Regs.Set(n, v)
			}
		}
	}
	if row.Rule(uint64(a.SP)).Kind == frame.RuleUnspecified {
		next.Regs.Set(a.SP, cfa) // the CFA is the caller's sp at the call (§6.4)
	}
	if raRule.Kind == frame.RuleUnspecified {
		if v, ok := cur.Regs.Get(a.RA); ok {
			next.Regs.Set(a.RA, v)
		}
	}
	ra, ok := next.Regs.Get(a.RA)
	if !ok {
		return Frame{}, false, fmt.Errorf("return address not recoverable")
	}
	if row.RASigned {
		ra = stripPAC(ra)
	}
	next.PC = ra
	next.Regs.Set(a.PC, ra)
	return next, false, nil
}

// applyRule recovers register n of the caller by rule.
func (s *stepper) applyRule(cur *Frame, ctx *exprContext, rule frame.Rule, n int) (uint64, bool, error) {
	a := s.arch
	switch rule.Kind {
	case frame.RuleUndefined:
		return 0, false, nil
	case frame.RuleSameValue:
		v, ok := cur.Regs.Get(n)
		return v, ok, nil
	case frame.RuleOffset:
		v, err := s.mem.word(ctx.cfa + uint64(rule.Offset))
		return v, err == nil, err
	case frame.RuleValOffset:
		return ctx.cfa + uint64(rule.Offset), true, nil
	case frame.RuleRegister:
		if rule.Reg >= maxRegs {
			return 0, false, nil
		}
		v, ok := cur.Regs.Get(int(rule.Reg))
		return v, ok, nil
	case frame.RuleExpression, frame.RuleValExpression:
		v, _, err := op.Eval(rule.Expr, a.Order, a.PtrSize, ctx, ctx.cfa)
		if err != nil {
			return 0, false, err
		}
		if rule.Kind == frame.RuleValExpression {
			return v, true, nil
		}
		v, err = s.mem.word(v)
		return v, err == nil, err
	}
	return 0, false, nil
}

// signalFrame marks cur as the sigreturn trampoline and returns the frame the
// signal interrupted, with the registers the kernel saved.
func (s *stepper) signalFrame(cur *Frame) (Frame, bool, string) {
	cur.SignalTrampoline = true
	cur.ReturnAddress = false
	sp := cur.Regs.SP()
	cur.CFA = sp
	regs, err := s.arch.signalContext(s.mem, sp, cur.PC)
	if err != nil {
		return Frame{}, false, err.Error()
	}
	pc := regs.PC()
	if pc == 0 {
		return Frame{}, true, ""
	}
	return Frame{PC: pc, Regs: regs, Trust: TrustSignal}, false, ""
}

// stripPAC removes an AArch64 pointer-authentication code from a return
// address, assuming 48-bit user virtual addresses.
func stripPAC(ra uint64) uint64 { return ra & (1<<48 - 1) }

// exprContext lets DWARF expressions read the callee's registers and memory.
type exprContext struct {
	regs *Regs
	mem  *memReader
	cfa  uint64
}

func (c *exprContext) Reg(n uint64) (uint64, bool) {
	if n >= maxRegs {
		return 0, false
	}
	return c.regs.Get(int(n))
}

func (c *exprContext) ReadMemory(addr uint64, size int) (uint64, error) {
	return c.mem.uint(addr, size)
}

// module returns the module containing pc, checking the Finder's answer.
func (u *Unwinder) module(pc uint64) *Module {
	if u.find == nil {
		return nil
	}
	m := u.find.ModuleAt(pc)
	if m == nil || pc < m.Lo || pc >= m.Hi {
		return nil
	}
	return m
}

// rowFor finds the CFI row for runtime address pc in mod: .eh_frame first,
// then .debug_frame.
func (u *Unwinder) rowFor(mod *Module, mem *memReader, pc uint64) (*frame.Row, *frame.FDE, error) {
	t := u.tablesFor(mod, mem)
	link := pc - mod.Bias
	err := error(frame.ErrNoFDE)
	for _, tab := range []*frame.Table{t.eh, t.debug} {
		if tab == nil {
			continue
		}
		row, fde, e := tab.RowFor(link)
		if e == nil {
			return row, fde, nil
		}
		if !errors.Is(e, frame.ErrNoFDE) || errors.Is(err, frame.ErrNoFDE) {
			err = e
		}
		if fde != nil {
			return nil, fde, e // the FDE is there but its program is bad
		}
	}
	return nil, nil, err
}

func (u *Unwinder) tablesFor(mod *Module, mem *memReader) *moduleTables {
	u.mu.Lock()
	defer u.mu.Unlock()
	if t, ok := u.tables[mod]; ok {
		return t
	}
	a := mem.arch
	t := &moduleTables{}
	if len(mod.EHFrame.Data) > 0 {
		t.eh = frame.NewEHFrame(mod.EHFrame.Data, mod.EHFrame.Addr, mod.EHFrameHdr.Data, mod.EHFrameHdr.Addr, a.Order, a.PtrSize)
		bias := mod.Bias
		t.eh.Deref = func(link uint64) (uint64, error) { return mem.word(link + bias) }
		t.eh.Index = mod.EHFrame.Index
	}
	if len(mod.DebugFrame.Data) > 0 {
		t.debug = frame.NewDebugFrame(mod.DebugFrame.Data, mod.DebugFrame.Addr, a.Order, a.PtrSize)
		t.debug.Index = mod.DebugFrame.Index
	}
	u.tables[mod] = t
	return t
}
