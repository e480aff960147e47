package logs

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// ROCmLog is what the ROCm stack printed when a kernel faulted: the HSA
// runtime's memory-fault line, a queue abort with its HSA status, HIP
// errors (from HIP itself, PyTorch or JAX/XLA), the ROCm debug agent's
// wave dump, and rocgdb's stop in an "AMDGPU Wave" thread with its
// backtrace. Fields stay zero when the log does not print them.
type ROCmLog struct {
	// From "Memory access fault by GPU node-2 (Agent handle: 0x55d0...)
	// on address 0x7f2e3c400000. Reason: Page not present or supervisor
	// privilege." (ROCr's default system-event handler).
	Node       int
	HasNode    bool
	Agent      uint64
	Address    uint64
	HasAddress bool
	Reason     string
	// HSAStatus is "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION" and
	// HSAMessage its text; Queue is the aborting queue ("Callback: Queue
	// 0x7f... aborting with error : ...", HIP's rocdevice.cpp).
	HSAStatus  string
	HSAMessage string
	Queue      uint64
	// HIPError is "hipErrorIllegalAddress"; HIPMessage the HIP text ("an
	// illegal memory access was encountered"); Runtime the line that
	// reported it (a Python exception, an XLA "INTERNAL: ..." status).
	HIPError   string
	HIPMessage string
	Runtime    string
	// Kernel is the faulting kernel when the log names it (debug agent
	// "Disassembly for function ...", rocgdb's frame or thread name).
	Kernel string
	// PC is the faulting wave's pc (debug agent, rocgdb); CodeObject the
	// URI of the code object holding it ("file:///app#offset=4096&size=9000")
	// and LoadBase where it was loaded.
	PC         uint64
	CodeObject string
	LoadBase   uint64
	// WaveReason is the debug agent's stop reason ("MEMORY_VIOLATION").
	WaveReason string
	// Wave is the rocgdb wave that stopped, with Signal its signal.
	Wave   *AMDWave
	Signal string
	// Frames is the wave's backtrace (rocgdb), innermost first.
	Frames []GDBFrame
	// PyFrames is the Python traceback before a HIP RuntimeError.
	PyFrames []PythonFrame
}

// AMDWave is rocgdb's "AMDGPU Wave AGENT:QUEUE:DISPATCH:WAVE (X,Y,Z)/N"
// (N: the wave's index within its work-group) and the lane it focused.
type AMDWave struct {
	Thread                         int // rocgdb's thread number
	Agent, Queue, Dispatch, WaveID int
	WorkGroup                      [3]uint32
	WaveInGroup                    int
	Lane                           int
	HasLane                        bool
	// WorkItem is the lane's work-item id within the group, when printed.
	WorkItem    [3]uint32
	HasWorkItem bool
}

var (
	reROCmFault = lazyregexp.New(`Memory access fault by GPU node-(\d+) \(Agent handle: (0x[0-9a-fA-F]+)\) on address (0x[0-9a-fA-F]+|\(nil\))\.\s*Reason:\s*(.*?)\s*$`)
	reHSAStatus = lazyregexp.New(`(HSA_STATUS_ERROR_[A-Z_]+)(?::\s*(.*?))?(?:\s+code:\s*0x[0-9a-fA-F]+)?\s*$`)
	reQueue     = lazyregexp.New(`Queue (0x[0-9a-fA-F]+) aborting`)
	reHIPError  = lazyregexp.New(`\b(hipError[A-Z]\w*)\b`)
	reHIPText   = lazyregexp.New(`(?i)HIP error:\s*(.*?)\s*(?:\(hipError\w+\))?\s*$`)
	reXLAStatus = lazyregexp.New(`\b(INTERNAL|UNKNOWN|FAILED_PRECONDITION|ABORTED|RESOURCE_EXHAUSTED): (.*)$`)
	reDAWave    = lazyregexp.New(`wave (0x[0-9a-fA-F]+)\b.*?\(stopped, reason: ([A-Z_]+)\)`)
	reDAPC      = lazyregexp.New(`^(?:pc|PC)\s*[:=]\s*(0x[0-9a-fA-F]+)`)
	reDAFunc    = lazyregexp.New(`^Disassembly for function (.+?):\s*$`)
	reDACO      = lazyregexp.New(`^code object:\s*(\S+)`)
	reDALoaded  = lazyregexp.New(`^loaded at:\s*\[(0x[0-9a-fA-F]+)-(0x[0-9a-fA-F]+)\]`)
	reWaveStop  = lazyregexp.New(`Thread (\d+) "AMDGPU Wave (\d+):(\d+):(\d+):(\d+) \((\d+),(\d+),(\d+)\)/(\d+)"(?: received signal (SIG\w+))?`)
	reXLAKernel = lazyregexp.New(`Failed to launch ROCm kernel: (\S+)`)
	reWaveLane  = lazyregexp.New(`lane (\d+) \(AMDGPU Lane [^)]*\)(?:\[(\d+),(\d+),(\d+)\])?`)
)

// rocmMarkers are strings only the ROCm stack prints; IsROCmLog looks for them.
var rocmMarkers = []string{"Memory access fault by GPU node-", "HSA_STATUS_ERROR_", "hipError", "HIP error:",
	"AMDGPU Wave", "rocm-debug-agent", "(stopped, reason: "}

// IsROCmLog reports whether a log's head holds a ROCm fault message.
func IsROCmLog(head []byte) bool {
	s := string(head)
	for _, m := range rocmMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// ParseROCm reads a ROCm fault log (program output, a job log, a rocgdb
// session).
func ParseROCm(r io.Reader) (*ROCmLog, error) {
	lr := newLineReader(r, maxLineLen)
	l := &ROCmLog{}
	p := rocmParser{l: l}
	for {
		raw, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		p.line(strings.TrimSpace(cleanLine(raw)))
	}
	if !p.seen {
		return nil, errors.New("no ROCm memory fault, HSA error, HIP error or AMDGPU wave found")
	}
	return l, nil
}

type rocmParser struct {
	l      *ROCmLog
	seen   bool
	inBT   bool // reading the wave's backtrace
	btDone bool
	inPy   bool // reading a Python traceback
}

func (p *rocmParser) line(s string) {
	l := p.l
	if p.backtraceLine(s) || p.pythonLine(s) {
		return
	}
	if m := reROCmFault.FindStringSubmatch(s); m != nil {
		l.Node, _ = strconv.Atoi(m[1])
		l.HasNode = true
		l.Agent = hexValue(m[2])
		if m[3] != "(nil)" {
			l.Address = hexValue(m[3])
		}
		l.HasAddress, l.Reason, p.seen = true, strings.TrimSuffix(m[4], "."), true
		return
	}
	if m := reHSAStatus.FindStringSubmatch(s); m != nil && l.HSAStatus == "" {
		l.HSAStatus, l.HSAMessage, p.seen = m[1], strings.TrimSpace(m[2]), true
		if strings.Contains(s, "("+m[1]) { // "Queue error (HSA_STATUS_…: text.)"
			l.HSAMessage = strings.TrimSuffix(l.HSAMessage, ")")
		}
	}
	if m := reQueue.FindStringSubmatch(s); m != nil {
		l.Queue = hexValue(m[1])
	}
	p.hipLine(s)
	p.agentLine(s)
	p.waveLine(s)
}

func (p *rocmParser) hipLine(s string) {
	l := p.l
	if m := reHIPError.FindStringSubmatch(s); m != nil && l.HIPError == "" {
		l.HIPError, p.seen = m[1], true
		if l.Runtime == "" {
			l.Runtime = s
		}
	}
	if m := reHIPText.FindStringSubmatch(s); m != nil && l.HIPMessage == "" {
		l.HIPMessage, p.seen = m[1], true
		l.Runtime = s
		if l.HIPError == "" {
			l.HIPError = hipErrorFor(m[1])
		}
	}
	if m := reXLAStatus.FindStringSubmatch(s); m != nil && (strings.Contains(s, "hip") || strings.Contains(s, "ROCm") ||
		strings.Contains(s, "HSA")) {
		l.Runtime = m[1] + ": " + m[2]
		if k := reXLAKernel.FindStringSubmatch(s); k != nil && l.Kernel == "" {
			l.Kernel = k[1]
		}
	}
}

// hipErrorFor names the hipError_t for HIP's message texts (hipGetErrorString).
func hipErrorFor(msg string) string {
	switch strings.ToLower(strings.TrimSpace(msg)) {
	case "an illegal memory access was encountered":
		return "hipErrorIllegalAddress"
	case "unspecified launch failure":
		return "hipErrorLaunchFailure"
	case "the launch timed out and was terminated":
		return "hipErrorLaunchTimeOut"
	case "device-side assert triggered":
		return "hipErrorAssert"
	case "out of memory":
		return "hipErrorOutOfMemory"
	}
	return ""
}

// agentLine reads the ROCm debug agent's wave dump.
func (p *rocmParser) agentLine(s string) {
	l := p.l
	switch {
	case reDAWave.MatchString(s):
		m := reDAWave.FindStringSubmatch(s)
		if l.WaveReason == "" {
			l.WaveReason, p.seen = m[2], true
		}
	case reDAPC.MatchString(s) && l.PC == 0:
		l.PC = hexValue(reDAPC.FindStringSubmatch(s)[1])
	case reDAFunc.MatchString(s) && l.Kernel == "":
		l.Kernel = reDAFunc.FindStringSubmatch(s)[1]
	case reDACO.MatchString(s) && l.CodeObject == "":
		l.CodeObject = reDACO.FindStringSubmatch(s)[1]
	case reDALoaded.MatchString(s) && l.LoadBase == 0:
		l.LoadBase = hexValue(reDALoaded.FindStringSubmatch(s)[1])
	}
}

// waveLine reads rocgdb's stop in an AMDGPU wave and its lane focus.
func (p *rocmParser) waveLine(s string) {
	l := p.l
	if m := reWaveStop.FindStringSubmatch(s); m != nil && (l.Wave == nil || m[10] != "") {
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		l.Wave = &AMDWave{Thread: n(1), Agent: n(2), Queue: n(3), Dispatch: n(4), WaveID: n(5),
			WorkGroup: [3]uint32{atou32(m[6]), atou32(m[7]), atou32(m[8])}, WaveInGroup: n(9)}
		if m[10] != "" {
			l.Signal = m[10]
		}
		p.seen, p.inBT, p.btDone = true, false, false
		return
	}
	if m := reWaveLane.FindStringSubmatch(s); m != nil && l.Wave != nil && strings.Contains(s, "Switching to") {
		l.Wave.Lane, _ = strconv.Atoi(m[1])
		l.Wave.HasLane = true
		if m[2] != "" {
			l.Wave.WorkItem = [3]uint32{atou32(m[2]), atou32(m[3]), atou32(m[4])}
			l.Wave.HasWorkItem = true
		}
	}
}

// backtraceLine takes "#N ..." lines of the first backtrace after the wave stopped.
func (p *rocmParser) backtraceLine(s string) bool {
	l := p.l
	s = strings.TrimPrefix(s, "(gdb) ")
	if l.Wave == nil || p.btDone || !strings.HasPrefix(s, "#") {
		if p.inBT {
			p.inBT, p.btDone = false, true
		}
		return false
	}
	f, ok := parseFrameLine(s)
	if !ok {
		return false
	}
	if f.Index == 0 {
		l.Frames = l.Frames[:0]
	}
	if len(l.Frames) < maxFrames {
		l.Frames = append(l.Frames, f)
	}
	p.inBT = true
	if l.Kernel == "" || f.Index > 0 {
		l.Kernel = f.Function // the outermost device frame is the kernel
	}
	return true
}

// pythonLine collects a Python traceback's frames (PyTorch on ROCm).
func (p *rocmParser) pythonLine(s string) bool {
	if strings.HasPrefix(s, "Traceback (most recent call last):") {
		p.inPy, p.l.PyFrames = true, nil
		return true
	}
	if !p.inPy {
		return false
	}
	if m := rePyFrame.FindStringSubmatch(s); m != nil {
		line, _ := strconv.Atoi(m[2])
		if len(p.l.PyFrames) < maxFrames {
			p.l.PyFrames = append(p.l.PyFrames, PythonFrame{File: m[1], Line: line, Function: m[3]})
		}
		return true
	}
	if strings.HasPrefix(s, "File ") || s == "" || strings.HasPrefix(s, "^") {
		return true
	}
	if strings.Contains(s, "Error") || strings.Contains(s, "Exception") {
		p.inPy = false
		return false
	}
	return true // the source line under a frame
}

func hexValue(s string) uint64 {
	v, _ := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"), 16, 64)
	return v
}
