package dap

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/sourcelookup"
)

// gpuThreadID is the DAP thread id of the GPU's faulting thread, and
// gpuThreadID+1.. those of the other threads of a GPU core dump: LWPs are
// below 2^22 (PID_MAX_LIMIT), so they cannot collide with a host thread.
const gpuThreadID = 1 << 30

// crashView is a launched dump as the adapter shows it: its threads in
// display order, frame ids, and the handles of variables and sources
// handed out so far.
type crashView struct {
	sess    *analysis.Session
	crash   *analysis.Crash
	res     *sourcelookup.Resolver
	exe     string
	threads []dthread
	stride  int // frame id = thread index*stride + frame index + 1
	stopped int // thread id of the stop

	vars    handles
	sources sourceRefs
}

// dthread is one DAP thread: a host thread (LWP) or a GPU thread.
type dthread struct {
	id      int
	name    string
	lwp     int // 0 for the GPU lane: no frame values
	crashed bool
	frames  []analysis.Frame
}

func newCrashView(sess *analysis.Session, res *sourcelookup.Resolver, exe string) *crashView {
	c := sess.Crash
	v := &crashView{sess: sess, crash: c, res: res, exe: exe}
	if g := c.GPU; g != nil && len(g.Threads) > 0 {
		v.threads = gpuThreads(g)
	} else if g != nil && len(g.Frames) > 0 {
		v.threads = append(v.threads, dthread{id: gpuThreadID, name: gpuThreadName(g), crashed: true, frames: g.Frames})
	}
	var rest []dthread
	for _, t := range c.Threads {
		dt := dthread{id: t.ID, name: threadName(t), lwp: t.ID, crashed: t.Crashed, frames: t.Frames}
		if t.ID == c.CrashingThreadID && len(v.threads) == 0 {
			v.threads = append(v.threads, dt)
		} else {
			rest = append(rest, dt)
		}
	}
	v.threads = append(v.threads, rest...)
	for _, t := range v.threads {
		v.stride = max(v.stride, len(t.frames)+1)
	}
	if len(v.threads) > 0 {
		v.stopped = v.threads[0].id
	}
	return v
}

// threadName names a thread by its first frame with source, as the Call
// Stack view lists it: "Thread 1234 worker-07: finish_job
// (threads64.c:40)". Parked threads then read by what they run, not by
// the futex they sleep in.
func threadName(t analysis.Thread) string {
	name := fmt.Sprintf("Thread %d", t.ID)
	if t.Name != "" {
		name += " " + t.Name
	}
	if t.Crashed {
		name += " (crashed)"
	}
	for _, f := range t.Frames {
		if f.File != "" && f.Function != "" {
			return fmt.Sprintf("%s: %s (%s:%d)", name, f.Function, filepath.Base(f.File), f.Line)
		}
	}
	if len(t.Frames) > 0 && t.Frames[0].Function != "" {
		return name + ": " + t.Frames[0].Function
	}
	return name
}

// gpuThreads are the threads of a GPU core dump, the faulting one first
// (with the inline chain at the faulting instruction and its registers),
// the others in the dump's order (the chain at their pc). Each is named as
// LLDB names it — "blockIdx(x=2 y=0 z=0) threadIdx(x=101 y=0 z=0)", or
// "device 0 SM 4 (no kernel context)" for an SM-level exception whose
// warps had exited — then its function and exception.
func gpuThreads(g *analysis.GPU) []dthread {
	var sel []dthread
	var rest []dthread
	for i := range g.Threads {
		t := &g.Threads[i]
		frames := t.Frames
		if t.Selected && len(g.Frames) > 0 {
			frames = g.Frames
		}
		if len(frames) == 0 {
			// No code image holds the pc: the frame is the pc alone.
			frames = []analysis.Frame{{PC: t.PC, Addr: parseHex(t.PC), Trust: analysis.TrustContext}}
		}
		if t.Selected {
			frames = withRegisters(frames, g.Registers)
		}
		dt := dthread{id: gpuThreadID + 1 + i, name: gpuCoreThreadName(t, frames), crashed: t.Selected, frames: frames}
		if t.Selected {
			dt.id = gpuThreadID
			sel = append(sel, dt)
		} else {
			rest = append(rest, dt)
		}
	}
	return append(sel, rest...)
}

// gpuCoreThreadName is "NAME: FUNCTION (EXCEPTION)".
func gpuCoreThreadName(t *analysis.GPUThread, frames []analysis.Frame) string {
	name := t.Name
	if fn := frames[0].Function; fn != "" {
		name += ": " + fn
	}
	switch {
	case t.Exception != "":
		name += " (" + t.Exception + ")"
	case t.StopReason != "":
		name += " (" + t.StopReason + ")"
	}
	return name
}

// withRegisters is a copy of frames whose levels carry the registers (the
// Registers scope of every inline level of the one physical frame).
func withRegisters(frames []analysis.Frame, regs map[string]string) []analysis.Frame {
	if len(regs) == 0 {
		return frames
	}
	m := make(map[string]uint64, len(regs))
	for n, v := range regs {
		m[n] = parseHex(v)
	}
	out := append([]analysis.Frame(nil), frames...)
	for i := range out {
		out[i].Regs = m
	}
	return out
}

func parseHex(s string) uint64 {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	return v
}

func gpuThreadName(g *analysis.GPU) string {
	name := "GPU"
	if g.Block != nil && g.Thread != nil {
		name += fmt.Sprintf(" block %s thread %s", g.Block, g.Thread)
	}
	if g.Lane != nil {
		name += fmt.Sprintf(" lane %d", *g.Lane)
	}
	if g.Exception != "" {
		name += " (" + g.Exception + ")"
	}
	return name + ": " + g.Kernel
}

// thread returns the thread with DAP id id and its index.
func (v *crashView) thread(id int) (*dthread, int) {
	for i := range v.threads {
		if v.threads[i].id == id {
			return &v.threads[i], i
		}
	}
	return nil, -1
}

// frameID is the DAP id of frame fi of thread index ti.
func (v *crashView) frameID(ti, fi int) int { return ti*v.stride + fi + 1 }

// frame resolves a DAP frame id.
func (v *crashView) frame(id int) (*dthread, int, bool) {
	if id <= 0 || v.stride == 0 {
		return nil, 0, false
	}
	ti, fi := (id-1)/v.stride, (id-1)%v.stride
	if ti >= len(v.threads) || fi >= len(v.threads[ti].frames) {
		return nil, 0, false
	}
	return &v.threads[ti], fi, true
}

// localPath is the local file of a frame's source, "" if none.
func (v *crashView) localPath(f *analysis.Frame) string {
	if f.Signal || f.File == "" {
		return ""
	}
	return v.res.Resolve(f, v.exe)
}

// aboveCulprit reports whether frame fi of thread index ti is above the
// classification's culprit frame of the crashing thread (a signal
// handler, an abort path).
func (v *crashView) aboveCulprit(ti, fi int) bool {
	cl := v.crash.Classification
	t := &v.threads[ti]
	return cl != nil && t.lwp != 0 && t.lwp == v.crash.CrashingThreadID && fi < cl.CulpritFrame
}
