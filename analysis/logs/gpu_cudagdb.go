package logs

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// CUDAGDBLog is what cuda-gdb printed about a GPU exception: the
// exception, the focus (which kernel, block, thread, SM, warp, lane), and
// the device backtrace.
type CUDAGDBLog struct {
	// Exception is "Warp Illegal Address" from "CUDA Exception: ..." or
	// "received signal CUDA_EXCEPTION_14, Warp Illegal Address."
	Exception string
	// ErrorPC is from "The exception was triggered at PC 0x...".
	ErrorPC uint64
	// ErrorLocation is what follows it in parentheses, "(kernels.cu:30)".
	ErrorLocation string
	// Focus is the last "[Switching focus to CUDA kernel ...]" or
	// "[Current focus set to CUDA kernel ...]".
	Focus *CUDAFocus
	// Frames is the last device backtrace, innermost first.
	Frames []CUDAGDBFrame
}

// CUDAFocus is cuda-gdb's focus line.
type CUDAFocus struct {
	Kernel, Grid, Device, SM, Warp, Lane int
	Block, Thread                        [3]uint32
}

// CUDAGDBFrame is one "#N ..." line of a device backtrace.
type CUDAGDBFrame struct {
	Num      int
	PC       uint64 // 0 for inlined frames, which cuda-gdb prints without one
	Function string
	// Launch is "<<<(4,1,1),(128,1,1)>>>" on the kernel's frame.
	Launch string
	Args   string
	File   string
	Line   int
	// InlinedFrom is cuda-gdb's " in FUNC inlined from FILE:LINE" suffix
	// (seen with -lineinfo builds): the one inline level it shows.
	InlinedFrom string
}

var (
	reCUDAException = lazyregexp.New(`CUDA Exception: (.+?)\s*$`)
	reCUDASignal    = lazyregexp.New(`received signal CUDA_EXCEPTION_\d+, (.+?)\.?\s*$`)
	reTriggered     = lazyregexp.New(`The exception was triggered at PC (0x[0-9a-fA-F]+)(?:\s*\((.*)\))?`)
	reFocus         = lazyregexp.New(`(?:Switching focus to|Current focus set to) CUDA kernel (\d+), grid (\d+), block \((\d+),(\d+),(\d+)\), thread \((\d+),(\d+),(\d+)\), device (\d+), sm (\d+), warp (\d+), lane (\d+)`)
	reCUDAFrameHead = lazyregexp.New(`^#(\d+)\s+(?:(0x[0-9a-fA-F]+) in )?(.*)$`)
	reCUDAFrameLoc  = lazyregexp.New(`^(\S+?):(\d+)(?:\s+in\s+(.+))?$`)
	reFrameStart    = lazyregexp.New(`^#\d+\s`)
	reSourceLine    = lazyregexp.New(`^\d+\t`)
)

// ParseCUDAGDB reads a cuda-gdb session log or batch output.
func ParseCUDAGDB(r io.Reader) (*CUDAGDBLog, error) {
	lr := newLineReader(r, maxLineLen)
	l := &CUDAGDBLog{}
	seen := false
	inBT := false
	pending := "" // a frame line gdb or a terminal wrapped, until its " at FILE:LINE"
	flush := func() {
		if pending == "" {
			return
		}
		f, ok := parseCUDAGDBFrame(pending)
		pending = ""
		if !ok {
			return
		}
		if f.Num == 0 || !inBT {
			l.Frames, inBT = nil, true // a new backtrace replaces the last
		}
		if len(l.Frames) < maxFrames {
			l.Frames = append(l.Frames, f)
		}
		seen = seen || f.Launch != ""
	}
	for {
		raw, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		line := cleanLine(raw)
		s := strings.TrimPrefix(strings.TrimSpace(line), "(cuda-gdb) ")
		if pending != "" && s != "" && !reFrameStart.MatchString(s) && !strings.HasPrefix(s, "[") &&
			!strings.HasPrefix(line, "(") && !reSourceLine.MatchString(s) {
			// gdb breaks before " at" with indentation; a terminal
			// hard-wraps anywhere, even inside a word.
			sep := ""
			if strings.HasPrefix(line, " ") {
				sep = " "
			}
			if len(pending) < maxFrameText {
				pending += sep + s
			}
			continue
		}
		flush()
		switch {
		case reCUDAException.MatchString(s):
			l.Exception, seen = reCUDAException.FindStringSubmatch(s)[1], true
		case reCUDASignal.MatchString(s):
			if l.Exception == "" {
				l.Exception = reCUDASignal.FindStringSubmatch(s)[1]
			}
			seen = true
		case reTriggered.MatchString(s):
			m := reTriggered.FindStringSubmatch(s)
			l.ErrorPC, _ = strconv.ParseUint(m[1][2:], 16, 64)
			l.ErrorLocation, seen = strings.TrimSpace(m[2]), true
		case reFocus.MatchString(s):
			m := reFocus.FindStringSubmatch(s)
			n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
			l.Focus = &CUDAFocus{Kernel: n(1), Grid: n(2), Device: n(9), SM: n(10), Warp: n(11), Lane: n(12),
				Block:  [3]uint32{atou32(m[3]), atou32(m[4]), atou32(m[5])},
				Thread: [3]uint32{atou32(m[6]), atou32(m[7]), atou32(m[8])}}
			seen = true
		case reFrameStart.MatchString(s):
			pending = s
			continue
		}
		inBT = false
	}
	flush()
	if !seen {
		return nil, errors.New("no cuda-gdb GPU exception, focus or kernel frame found")
	}
	return l, nil
}

// parseCUDAGDBFrame reads "#N [0xPC in ]FUNC[<<<(g),(b)>>>] (ARGS) at FILE:LINE[ in F inlined from F:L]".
// Kernel names hold parentheses (lambdas, function types), so the
// location is found from the end and the arguments as the last balanced
// parenthesized group.
func parseCUDAGDBFrame(s string) (CUDAGDBFrame, bool) {
	m := reCUDAFrameHead.FindStringSubmatch(s)
	if m == nil {
		return CUDAGDBFrame{}, false
	}
	rest := m[3]
	at := strings.LastIndex(rest, " at ")
	if at < 0 {
		return CUDAGDBFrame{}, false
	}
	loc := reCUDAFrameLoc.FindStringSubmatch(strings.TrimSpace(rest[at+4:]))
	if loc == nil {
		return CUDAGDBFrame{}, false
	}
	f := CUDAGDBFrame{File: loc[1]}
	f.Num, _ = strconv.Atoi(m[1])
	if m[2] != "" {
		f.PC, _ = strconv.ParseUint(m[2][2:], 16, 64)
	}
	f.Line, _ = strconv.Atoi(loc[2])
	f.InlinedFrom = loc[3]
	head := strings.TrimSpace(rest[:at])
	if i := strings.Index(head, "<<<"); i >= 0 {
		if j := strings.Index(head[i:], ">>>"); j >= 0 {
			f.Function, f.Launch, f.Args = strings.TrimSpace(head[:i]), head[i:i+j+3], strings.TrimSpace(head[i+j+3:])
			return f, true
		}
	}
	f.Function = head
	if strings.HasSuffix(head, ")") {
		depth := 0
		for k := len(head) - 1; k >= 0; k-- {
			switch head[k] {
			case ')':
				depth++
			case '(':
				depth--
			}
			if depth == 0 {
				f.Function, f.Args = strings.TrimSpace(head[:k]), head[k:]
				return f, true
			}
		}
	}
	return f, true
}
