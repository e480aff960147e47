package unwind

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// budget is what all the unwinds of one Unwinder may spend together: a
// number of frames and a span of time from the first unwind. A crafted
// core can make every thread's stack as deep as the per-thread cap allows;
// the budget keeps the whole dump bounded.
type budget struct {
	frames   atomic.Int64 // frames left
	start    sync.Once
	deadline atomic.Int64 // unix nanoseconds; set by the first take
	spent    atomic.Value // string: why the budget ran out
}

// take spends one frame; it returns why unwinding must stop, or "".
func (b *budget) take(opt Options) string {
	b.start.Do(func() { b.deadline.Store(time.Now().Add(opt.MaxTime).UnixNano()) })
	if msg, _ := b.spent.Load().(string); msg != "" {
		return msg
	}
	msg := ""
	switch {
	case b.frames.Add(-1) < 0:
		msg = fmt.Sprintf("frame budget of %d frames for this dump reached", opt.MaxTotalFrames)
	case time.Now().UnixNano() > b.deadline.Load():
		msg = fmt.Sprintf("time budget of %v for unwinding this dump reached", opt.MaxTime)
	default:
		return ""
	}
	b.spent.CompareAndSwap(nil, msg)
	return b.spent.Load().(string)
}

// Budget returns why the Unwinder's budget for the dump ran out, or "" if
// it did not; callers report it once as a problem of the dump.
func (u *Unwinder) Budget() string {
	msg, _ := u.budget.spent.Load().(string)
	return msg
}

// frameID identifies a frame as gdb's frame_id does: where its code is and
// where its frame is.
type frameID struct{ pc, cfa, sp uint64 }

// signalFrames remembers the signal frames of one unwind (trampolines and
// the frames they restore). Between two of them the stack pointer only
// grows (Unwind checks it), so any cycle passes through a signal frame and
// shows as one met twice; ordinary frames are not recorded, which keeps a
// deep recursion as cheap as before.
type signalFrames map[frameID]bool

// repeats records f if it is a signal frame and reports whether it was
// already recorded.
func (s *signalFrames) repeats(f *Frame) bool {
	if !f.SignalTrampoline && f.Trust != TrustSignal {
		return false
	}
	id := frameID{f.PC, f.CFA, f.Regs.SP()}
	if (*s)[id] {
		return true
	}
	if *s == nil {
		*s = signalFrames{}
	}
	(*s)[id] = true
	return false
}
