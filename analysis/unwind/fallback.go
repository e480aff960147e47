package unwind

// Fallbacks for frames no CFI covers: the frame-pointer chain, then a
// bounded scan of the stack for a return address.

const (
	// maxFrameSize bounds how far above sp a plausible frame pointer may be.
	maxFrameSize = 16 << 20
	// maxScanWords bounds the stack scan.
	maxScanWords = 1024
)

// returnAddressAt treats the word at addr as cur's return address, if it is
// one: it points into a module right after a call instruction. The caller's
// sp is addr+ptrSize; callee-saved registers are assumed unchanged.
func (s *stepper) returnAddressAt(cur *Frame, addr uint64) (Frame, bool) {
	ra, err := s.mem.word(addr)
	if err != nil || !s.plausibleReturn(ra) {
		return Frame{}, false
	}
	return s.callerWith(cur, ra, addr+uint64(s.arch.PtrSize)), true
}

// plausibleReturn reports whether ra points into a known module right after a
// call instruction.
func (s *stepper) plausibleReturn(ra uint64) bool {
	return ra != 0 && s.u.module(ra) != nil && s.arch.afterCall(s.mem, ra)
}

// callerWith builds a caller frame with pc ra and stack pointer sp, keeping
// cur's callee-saved registers.
func (s *stepper) callerWith(cur *Frame, ra, sp uint64) Frame {
	a := s.arch
	next := Frame{PC: ra, Regs: NewRegs(a), ReturnAddress: true}
	for _, n := range a.CalleeSaved {
		if v, ok := cur.Regs.Get(n); ok {
			next.Regs.Set(n, v)
		}
	}
	next.Regs.Set(a.PC, ra)
	next.Regs.Set(a.SP, sp)
	return next
}

// framePointerStep follows the frame-pointer chain (System V AMD64 psABI
// §3.2.2 "The Stack Frame"; AAPCS64 §6.2.3 "The Frame Pointer"): the saved
// frame pointer at [fp], the return address at [fp+ptrSize], the caller's sp
// at fp+2*ptrSize. It is used only while the chain is plausible: fp readable,
// aligned, at or above sp and within maxFrameSize of it, and the return
// address in a module. As the caller's sp is above fp, the chain can only
// continue with a saved fp above this one.
func (s *stepper) framePointerStep(cur *Frame) (next Frame, end, ok bool) {
	a := s.arch
	fp, okFP := cur.Regs.Get(a.FP)
	sp := cur.Regs.SP()
	ps := uint64(a.PtrSize)
	if !okFP || fp == 0 || fp < sp || fp-sp > maxFrameSize || fp%ps != 0 {
		return Frame{}, false, false
	}
	savedFP, err1 := s.mem.word(fp)
	ra, err2 := s.mem.word(fp + ps)
	if err1 != nil || err2 != nil {
		return Frame{}, false, false
	}
	if ra != 0 && s.u.module(ra) == nil {
		return Frame{}, false, false
	}
	cur.CFA = fp + 2*ps
	next = s.callerWith(cur, ra, fp+2*ps)
	next.Regs.Set(a.FP, savedFP)
	next.Trust = TrustFramePointer
	return next, false, true
}

// scanStep looks up the stack from sp for the first word that is a plausible
// return address.
func (s *stepper) scanStep(cur *Frame) (Frame, bool) {
	sp, ok := cur.Regs.Get(s.arch.SP)
	if !ok {
		return Frame{}, false
	}
	ps := uint64(s.arch.PtrSize)
	sp &^= ps - 1
	for i := uint64(0); i < maxScanWords; i++ {
		addr := sp + i*ps
		if addr < sp {
			break // wrapped
		}
		ra, err := s.mem.word(addr)
		if err != nil {
			break
		}
		if s.plausibleReturn(ra) {
			next := s.callerWith(cur, ra, addr+ps)
			next.Trust = TrustScan
			return next, true
		}
	}
	return Frame{}, false
}
