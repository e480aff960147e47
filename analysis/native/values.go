package native

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/debuginfo/variables"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/unwind"
)

// Value is an argument or local variable of a frame (see variables.Value).
type Value = variables.Value

// FrameValues reads, for crash c opened from this process, the arguments and locals of frame frameIndex (an index
// into the thread's Frames, inline levels included) of thread threadID
// from the dump: the DWARF locations of the frame's function (or inlined
// function) evaluated at its pc against the registers recovered for its
// physical frame, its CFA and process memory. Registers the unwinder did
// not recover make the values that live in them "<optimized out>". A
// frame without DWARF (a system library without its debug file, a
// signal frame) has no values and no error.
func (p *Process) FrameValues(c *model.Crash, threadID, frameIndex int) ([]Value, error) {
	if c == nil {
		return nil, fmt.Errorf("no crash model")
	}
	th := c.Thread(threadID)
	if th == nil {
		return nil, fmt.Errorf("no thread %d", threadID)
	}
	if frameIndex < 0 || frameIndex >= len(th.Frames) {
		return nil, fmt.Errorf("thread %d has no frame %d", threadID, frameIndex)
	}
	f := &th.Frames[frameIndex]
	if f.Signal || f.Language != "" {
		return nil, nil
	}
	// The inline levels of one physical frame are consecutive, innermost
	// first; all but the last are Inlined.
	first := frameIndex
	for first > 0 && th.Frames[first-1].Inlined && !th.Frames[first-1].Signal {
		first--
	}
	level := frameIndex - first
	m := p.moduleAt(f.Addr)
	if m == nil || m.symbols() == nil {
		return nil, nil // no symbols for this frame: nothing to show
	}
	// A caller's pc is a return address: its call is the instruction
	// before (as gdb's get_frame_address_in_block), except in the
	// innermost frame and the frame a signal interrupted.
	pc := f.Addr - m.bias
	if first > 0 && !th.Frames[first-1].Signal {
		pc--
	}
	arch := unwindArch(p.core.Machine)
	fs := &frameState{p: p, cfa: f.CFA, regs: arch.RegsFromNamed(f.Regs)}
	if first == 0 && arch == unwind.AMD64 {
		p.addVectorRegs(&fs.regs, threadID)
	}
	vals, err := m.symbols().FrameValues(pc, level, m.bias, fs)
	if errors.Is(err, variables.ErrNoScope) {
		return nil, nil // no DWARF for this frame: nothing to show
	}
	return vals, err
}

// frameState is a frame's registers, CFA and the process memory, for
// DWARF location expressions.
type frameState struct {
	p    *Process
	cfa  uint64
	regs unwind.Regs
}

func (f *frameState) Reg(n uint64) (uint64, bool) {
	if n > 1<<16 {
		return 0, false
	}
	return f.regs.Get(int(n))
}

func (f *frameState) CFA() (uint64, bool) { return f.cfa, f.cfa != 0 }

func (f *frameState) ReadMemory(addr uint64, b []byte) (int, error) {
	return f.p.ReadMemory(addr, b)
}

// FXSAVE layout of NT_PRFPREG on x86-64 (Intel SDM Vol. 1 §10.5.1): xmm0
// to xmm15 at byte 160, 16 bytes each; their DWARF numbers are 17 to 32
// (System V AMD64 ABI §3.6.2, Figure 3.36).
const (
	fxsaveXMM0   = 160
	dwarfXMM0    = 17
	numXMM       = 16
	fxsaveXMMLen = 16
)

// addVectorRegs adds the low 8 bytes of xmm0-xmm15 of the thread's
// innermost frame (from NT_PRFPREG) to regs: floating-point values live
// there. Only the innermost frame has them; callers' are not recoverable.
func (p *Process) addVectorRegs(regs *unwind.Regs, threadID int) {
	for i := range p.core.Threads {
		t := &p.core.Threads[i]
		if t.LWP != threadID {
			continue
		}
		fp := t.FPRegs
		for k := 0; k < numXMM; k++ {
			off := fxsaveXMM0 + k*fxsaveXMMLen
			if off+8 > len(fp) {
				break
			}
			regs.Set(dwarfXMM0+k, binary.LittleEndian.Uint64(fp[off:off+8]))
		}
		return
	}
}
