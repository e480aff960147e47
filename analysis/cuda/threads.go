package cuda

import "fmt"

// GPU threads as LLDB's nvgpu-core reader makes them (ProcessNVGPUCore's
// thread list; the tests cited are in lldb/test/API/gpu/nvidia/corefiles
// of LLDB's GPU branch):
//
//   - SMs are walked in table order, each SM's warps and their lane rows in
//     turn; a lane row is a thread when the warp's validLanesMask has its
//     bit (by row index) and a per-lane leaf (registers, predicates, local
//     memory, call stack) hangs below it, even where the mask marks more
//     lanes valid (TestNVGPUArtificialMalformed.
//     test_sparse_lanes_materialize_by_leaf). faultline differs in one
//     case: a dump with no per-lane leaf at all (a writer that saved no
//     registers) keeps every valid lane rather than having no thread.
//   - A lane's exception is its own row's when set; else, when its warp's
//     errorPC is valid and the lane is active, the exception its SM row
//     records: the lane borrows it (test_minimal_scaffold_loads reads
//     WARP_ILLEGAL_INSTRUCTION from the SM; TestNVGPUArtificialSMException.
//     test_surviving_lane_suppresses_stand_in). A broken warp's active lanes
//     are at a trap.
//   - An SM with no lane thread whose row records an exception gets one
//     stand-in thread, "device D SM S (no kernel context)", whose only frame
//     is the SM's errorPC (0 when the row has none): the fault of a kernel
//     whose warps exited before the dump (test_stands_in_for_exception_after_
//     warps_exit, test_exception_without_error_pc). An idle SM gets none
//     (test_idle_sm_gets_no_thread); an SM with a surviving lane gets none
//     (test_surviving_lane_suppresses_stand_in).
//   - The selected thread is the first lane thread with an exception, else
//     the first stand-in, else the first thread at a trap
//     (test_lane_exception_outranks_sm_exception: cuda-gdb's order, which
//     consults SM state only after finding no lane exception).

// ExceptionSource says which row a thread's exception comes from.
type ExceptionSource string

const (
	// FromLane: the lane's own row.
	FromLane ExceptionSource = "lane"
	// FromWarp: the SM row's, borrowed by an active lane of a warp whose
	// errorPC is valid.
	FromWarp ExceptionSource = "warp"
	// FromSM: the SM row's, on a stand-in thread (no lane survived).
	FromSM ExceptionSource = "sm"
)

// Thread is one GPU thread: a lane, or the stand-in of an SM whose
// exception outlived its warps (Warp and Lane nil).
type Thread struct {
	SM        *SM
	Warp      *Warp
	Lane      *Lane
	Exception Exception
	Source    ExceptionSource // "" without exception
	Trap      bool            // the lane's warp is broken (a trap or breakpoint) and the lane active
}

// StandIn says whether t stands in for an SM-level exception.
func (t *Thread) StandIn() bool { return t.Lane == nil }

// HasStop says whether t has a stop reason: an exception or a trap.
func (t *Thread) HasStop() bool { return t.Exception != 0 || t.Trap }

// Name is the thread's name as LLDB gives it: "blockIdx(x=1 y=0 z=0)
// threadIdx(x=7 y=0 z=0)" for a lane, "device 0 SM 4 (no kernel context)"
// for a stand-in.
func (t *Thread) Name() string {
	if t.StandIn() {
		return fmt.Sprintf("device %d SM %d (no kernel context)", t.SM.Device, t.SM.ID)
	}
	b, th := t.Warp.Block, t.Lane.Thread
	return fmt.Sprintf("blockIdx(x=%d y=%d z=%d) threadIdx(x=%d y=%d z=%d)", b[0], b[1], b[2], th[0], th[1], th[2])
}

// PC is the pc of the thread's frame 0: the lane's virtual PC, or a
// stand-in's errorPC (0 when its SM recorded none).
func (t *Thread) PC() uint64 {
	if t.StandIn() {
		return t.ErrorPC()
	}
	return t.Lane.PC
}

// ErrorPCValid says whether the thread's warp (a stand-in: its SM)
// recorded an errorPC.
func (t *Thread) ErrorPCValid() bool {
	if t.StandIn() {
		return t.SM.ErrorPCValid
	}
	return t.Warp.ErrorPCValid
}

// ErrorPC is the errorPC register: the warp's (a stand-in: the SM's) when
// valid, else 0.
func (t *Thread) ErrorPC() uint64 {
	switch {
	case !t.ErrorPCValid():
		return 0
	case t.StandIn():
		return t.SM.ErrorPC
	}
	return t.Warp.ErrorPC
}

// FaultPC is where the fault happened: the errorPC when valid, else the
// thread's pc; ok is false for a stand-in whose SM recorded no errorPC.
func (t *Thread) FaultPC() (pc uint64, ok bool) {
	if t.StandIn() {
		return t.SM.ErrorPC, t.SM.ErrorPCValid
	}
	if t.Warp.ErrorPCValid {
		return t.Warp.ErrorPC, true
	}
	return t.Lane.PC, true
}

// Threads lists the dump's GPU threads in LLDB's order.
func (d *CoreDump) Threads() []Thread {
	bySM := make([][]int, len(d.SMs))
	for wi := range d.Warps {
		if si := d.Warps[wi].SMIndex; si >= 0 && si < len(d.SMs) {
			bySM[si] = append(bySM[si], wi)
		}
	}
	var out []Thread
	for si := range d.SMs {
		sm := &d.SMs[si]
		before := len(out)
		for _, wi := range bySM[si] {
			out = d.laneThreads(out, sm, &d.Warps[wi])
		}
		if len(out) == before && sm.Exception != 0 {
			out = append(out, Thread{SM: sm, Exception: sm.Exception, Source: FromSM})
		}
	}
	return out
}

// laneThreads appends the threads of w's lanes to out.
func (d *CoreDump) laneThreads(out []Thread, sm *SM, w *Warp) []Thread {
	for li := range w.Lanes {
		l := &w.Lanes[li]
		if !laneBit(w.ValidLanes, l.Row) || (d.laneLeaves && !l.leaf) {
			continue
		}
		active := laneBit(w.ActiveLanes, l.Row)
		t := Thread{SM: sm, Warp: w, Lane: l, Trap: w.Broken && active}
		switch {
		case l.Exception != 0:
			t.Exception, t.Source = l.Exception, FromLane
		case w.ErrorPCValid && active && sm.Exception != 0:
			t.Exception, t.Source = sm.Exception, FromWarp
		}
		out = append(out, t)
	}
	return out
}

func laneBit(mask uint32, row int) bool { return row < 32 && mask&(1<<uint(row)) != 0 }

// SelectThread is the index of the thread a debugger stops on: the first
// lane with an exception, else the first stand-in, else the first at a
// trap, else the first thread; -1 for none.
func SelectThread(ts []Thread) int {
	standIn, trap := -1, -1
	for i := range ts {
		t := &ts[i]
		switch {
		case t.Exception != 0 && !t.StandIn():
			return i
		case t.StandIn() && standIn < 0:
			standIn = i
		case t.Trap && trap < 0:
			trap = i
		}
	}
	switch {
	case standIn >= 0:
		return standIn
	case trap >= 0:
		return trap
	case len(ts) > 0:
		return 0
	}
	return -1
}
