// Package python reconstructs the Python-level stacks of a CPython process
// from its memory (a core dump, or a stopped live process) and interleaves
// them with the native backtrace at the interpreter's evaluation-loop
// frames, as py-spy --native and pystack do.
//
// It reads CPython 3.11 and 3.12 through the layout of their headers (they
// publish nothing for out-of-process readers), and 3.13 and 3.14 through
// the _Py_DebugOffsets table those versions place at the start of
// _PyRuntime.
// A version it cannot read is reported, never guessed at. Every pointer
// comes from memory that may be corrupt: reads are bounded, loops are
// capped and cycles are detected.
package python

import (
	"errors"
	"fmt"
)

// Frame is one Python function activation.
type Frame struct {
	// Function is the code object's qualified name (co_qualname,
	// "Trainer.step"), or co_name where the version does not publish it.
	Function string
	File     string
	// Line is the line of the instruction the frame was executing (for a
	// caller: the call), as faulthandler and tracebacks print it; 0 when
	// unknown.
	Line int
	// Entry marks the outermost frame of one evaluation-loop call: the
	// frames from the previous Entry (exclusive) to this one ran in a
	// single native _PyEval_EvalFrameDefault frame.
	Entry bool
}

// Thread is one Python thread state.
type Thread struct {
	// NativeID is the kernel thread id (PyThreadState.native_thread_id), the
	// LWP of the core's thread.
	NativeID int
	// ThreadID is pthread_self() of the thread (PyThreadState.thread_id),
	// the "Thread 0x..." of faulthandler's output.
	ThreadID uint64
	// Frames lists the frames innermost first.
	Frames []Frame
	// Err says why the walk stopped early, if it did.
	Err error
}

// Stacks is every thread's Python stack.
type Stacks struct {
	// Version is the interpreter's version, "3.11.2".
	Version string
	Threads []Thread
}

// ErrNoRuntime is returned by ReadStacks for a process that has no CPython
// runtime (no _PyRuntime symbol).
var ErrNoRuntime = errors.New("no CPython runtime (_PyRuntime) in this process")

// UnsupportedError says the process runs a CPython faultline cannot read.
type UnsupportedError struct {
	Version string // "3.10", or "" when unknown
	Reason  string
}

func (e *UnsupportedError) Error() string {
	if e.Version == "" {
		return "Python frames not read: " + e.Reason
	}
	return fmt.Sprintf("Python frames not read: CPython %s %s", e.Version, e.Reason)
}

// ReadStacks reads the Python stack of every thread of every interpreter.
func ReadStacks(p Process) (*Stacks, error) {
	runtime, ok := p.SymbolAddress("_PyRuntime")
	if !ok {
		return nil, ErrNoRuntime
	}
	l, err := findLayout(p, runtime)
	if err != nil {
		return nil, err
	}
	m := &memory{p: p}
	s := &Stacks{Version: versionString(l.version)}
	codeType, _ := p.SymbolAddress("PyCode_Type")
	interp := m.u64(runtime + l.runtimeInterpretersHead)
	seen := map[uint64]bool{}
	for i := 0; interp != 0 && i < maxInterpreters && m.err == nil && !seen[interp]; i++ {
		seen[interp] = true
		ts := m.u64(interp + l.interpThreadsHead)
		for j := 0; ts != 0 && j < maxThreads && m.err == nil && !seen[ts]; j++ {
			seen[ts] = true
			t := Thread{
				ThreadID: m.u64(ts + l.tstateThreadID),
				NativeID: int(m.u64(ts + l.tstateNativeThreadID)),
			}
			if m.err != nil {
				break
			}
			t.Frames, t.Err = readFrames(p, l, ts, codeType)
			s.Threads = append(s.Threads, t)
			ts = m.u64(ts + l.tstateNext)
		}
		interp = m.u64(interp + l.interpNext)
	}
	if m.err != nil && len(s.Threads) == 0 {
		return nil, fmt.Errorf("reading CPython %s thread states: %w", s.Version, m.err)
	}
	return s, nil
}

// findLayout identifies the interpreter: _Py_DebugOffsets at _PyRuntime
// (3.13+), else Py_Version (3.11+; a const unsigned long holding
// PY_VERSION_HEX).
func findLayout(p Process, runtime uint64) (*layout, error) {
	b := make([]byte, debugOffsetsSize)
	n, _ := p.ReadMemory(runtime, b)
	if n >= 16 && string(b[:8]) == debugCookie {
		return parseDebugOffsets(b[:n])
	}
	m := &memory{p: p}
	addr, ok := p.SymbolAddress("Py_Version")
	if !ok {
		return nil, &UnsupportedError{Reason: "is older than 3.11 (no Py_Version symbol); 3.11 and later are supported"}
	}
	v := m.u64(addr)
	if m.err != nil {
		return nil, &UnsupportedError{Reason: fmt.Sprintf("version unreadable: %v", m.err)}
	}
	switch minor(v) {
	case 0x030b:
		return layout311(v), nil
	case 0x030c:
		return layout312(v), nil
	}
	ver := fmt.Sprintf("%d.%d", v>>24&0xff, v>>16&0xff)
	if minor(v) < 0x030b {
		return nil, &UnsupportedError{Version: ver, Reason: "is older than 3.11; 3.11 and later are supported"}
	}
	return nil, &UnsupportedError{Version: ver, Reason: "publishes no _Py_DebugOffsets at _PyRuntime"}
}

// readFrames walks one thread's frame chain, innermost first.
func readFrames(p Process, l *layout, ts, codeType uint64) ([]Frame, error) {
	m := &memory{p: p}
	frame := m.u64(ts + l.tstateCurrentFrame)
	if l.hasCFrame && frame != 0 {
		frame = m.u64(frame + l.cframeCurrentFrame)
	}
	var out []Frame
	seen := map[uint64]bool{}
	for frame != 0 && m.err == nil {
		if len(out) >= maxFrames {
			return out, fmt.Errorf("more than %d Python frames", maxFrames)
		}
		if seen[frame] {
			return out, fmt.Errorf("frame chain loops at %#x", frame)
		}
		seen[frame] = true
		owner := m.u8(frame + l.frameOwner)
		if l.shimOwner != 0 && owner >= l.shimOwner {
			// The eval loop's own entry frame: the frame pushed before it
			// (the previous one listed) was the first its call ran.
			if n := len(out); n > 0 {
				out[n-1].Entry = true
			}
			frame = m.u64(frame + l.framePrevious)
			continue
		}
		code := m.u64(frame + l.frameCode)
		if l.taggedExecutable {
			code &^= 3 // _PyStackRef tag bits
		}
		f := readFrame(m, l, frame, code, codeType)
		if l.frameIsEntry != 0 && m.u8(frame+l.frameIsEntry) != 0 {
			f.Entry = true
		}
		if m.err != nil {
			break
		}
		out = append(out, f)
		frame = m.u64(frame + l.framePrevious)
	}
	return out, m.err
}

// readFrame names one frame's code and computes its line.
func readFrame(m *memory, l *layout, frame, code, codeType uint64) Frame {
	if codeType != 0 && m.u64(code+8) != codeType { // ob_type
		return Frame{Function: "<not a code object>"}
	}
	f := Frame{File: m.str(l, m.u64(code+l.codeFilename))}
	if l.codeQualname != 0 {
		f.Function = m.str(l, m.u64(code+l.codeQualname))
	} else {
		f.Function = m.str(l, m.u64(code+l.codeName))
	}
	first := int(int32(m.u32(code + l.codeFirstLineno)))
	instr := m.u64(frame + l.frameInstr)
	start := code + l.codeCodeAdaptive
	if m.err != nil || instr < start || (instr-start)/2 > maxCodeUnits {
		return f
	}
	// _PyInterpreterFrame_LASTI: the index of the instruction (2-byte code
	// units) the frame last executed, as faulthandler computes it.
	table := m.bytes(l, m.u64(code+l.codeLinetable), maxLineTable)
	if m.err != nil {
		return f
	}
	f.Line = lineAt(table, first, int((instr-start)/2))
	return f
}
