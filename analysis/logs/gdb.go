// Package logs parses crash logs: the text that debuggers and runtimes print
// about a crash (gdb backtraces, and in time faulthandler, nvdisasm -gi,
// compute-sanitizer and cuda-gdb output) into structured values.
//
// Logs are untrusted input. The parsers read them line by line, cap line
// lengths and the number of threads and frames they keep, and never fail
// on lines they do not recognize: they skip them.
package logs

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// GDBLog is what a gdb session printed about a crashed process: the signal,
// every thread's backtrace and the current thread.
type GDBLog struct {
	// Signal is the signal's name, "SIGSEGV" in
	// "Program terminated with signal SIGSEGV, Segmentation fault.".
	Signal string
	// SignalDesc is gdb's description of it, "Segmentation fault".
	SignalDesc string
	// Threads lists each thread in the order the log first mentions it
	// (the `info threads` table, else the `thread apply all bt` headers).
	Threads []GDBThread
	// CurrentThread is the gdb thread number marked "*" in `info threads`
	// (else the one in "[Current thread is N ...]"; else, for a log holding
	// a single `bt`, that thread's number). 0 when unknown.
	CurrentThread int
}

// GDBThread is one thread of a gdb log.
type GDBThread struct {
	// Num is gdb's thread number ("Thread 3 (...)"; for "1.3" the 3).
	Num int
	// LWP is the kernel thread id ("(LWP 1234)", or "process 1234").
	LWP int
	// Name is the thread name gdb printed in quotes, if any.
	Name string
	// Frames is the thread's backtrace, innermost first.
	Frames []GDBFrame
	// Stopped is gdb's reason for ending the backtrace early, the text after
	// "Backtrace stopped: ".
	Stopped string
	// MoreFrames is set when gdb printed "(More stack frames follow...)":
	// the backtrace was limited (bt N) and Frames is not all of the stack.
	MoreFrames bool
}

// GDBFrame is one "#N ..." line of a gdb backtrace.
type GDBFrame struct {
	Index int
	// PC is the frame's pc; HasPC is false when gdb printed none (inlined
	// levels, and frame 0 when the pc is at the start of a line).
	PC    uint64
	HasPC bool
	// Function is the name as printed ("??" when unknown, "std::terminate()"
	// for minimal symbols that carry their parameter list).
	Function string
	// Args is the argument list without its parentheses.
	Args string
	// File and Line are from " at FILE:LINE".
	File string
	Line int
	// Library is the object named by " from /lib/...": gdb prints it for
	// frames without line information.
	Library string
	// Signal marks "<signal handler called>" (Function is then that text).
	Signal bool
}

// SignalHandlerCalled is how gdb names the frame of a signal trampoline.
const SignalHandlerCalled = "<signal handler called>"

// ErrNotGDBLog is wrapped by the ParseError that ParseGDB returns for input
// that holds no backtrace frame, thread or signal line.
var ErrNotGDBLog = errors.New("no gdb backtrace, thread list or signal found")

// ErrLimit is wrapped by the ParseError that ParseGDB returns, along with
// the log parsed so far, when the input has more threads or frames than
// ParseGDB keeps.
var ErrLimit = errors.New("too many threads or frames")

// ParseError is an error in a log, with where it was found.
type ParseError struct {
	Line   int   // 1-based line number
	Offset int64 // byte offset of the line's start
	Err    error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("gdb log: line %d (offset %d): %v", e.Line, e.Offset, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Limits on what ParseGDB keeps. Lines longer than maxLineLen are cut;
// frames joined from wrapped lines are cut at maxFrameText.
const (
	maxThreads   = 1 << 17
	maxFrames    = 1 << 18 // in all threads: as many as faultline unwinds per core
	maxLineLen   = 1 << 20
	maxFrameText = 1 << 16
)

// ParseGDB reads the output of gdb's `bt`, `thread apply all bt` and
// `info threads` (gdb 13 format; several commands in one log are fine, as
// are wrapped lines from a terminal, ANSI styling and "(gdb) " prompts).
//
// A read error is returned as is. Input with nothing gdb-like in it yields
// a *ParseError wrapping ErrNotGDBLog; input beyond the limits yields the
// log so far and a *ParseError wrapping ErrLimit.
func ParseGDB(r io.Reader) (*GDBLog, error) {
	p := &gdbParser{log: &GDBLog{}, byNum: map[int]int{}, ctx: -1}
	lr := newLineReader(r, maxLineLen)
	for {
		line, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		p.line(lr, cleanLine(line))
		if p.limitErr != nil {
			break
		}
	}
	p.flushFrame()
	p.finish()
	if p.limitErr != nil {
		return p.log, p.limitErr
	}
	if !p.found {
		return nil, &ParseError{Line: lr.num, Offset: lr.off, Err: ErrNotGDBLog}
	}
	return p.log, nil
}

// gdbParser is ParseGDB's state between lines.
type gdbParser struct {
	log   *GDBLog
	byNum map[int]int // thread number -> index in log.Threads
	// ctx is the index of the thread that frames go to (the last
	// "Thread N (...):" header), or -1 for frames outside any header.
	ctx int
	// loose is the backtrace being read outside any header; best is the
	// longest one finished so far (a `bt` beats the "#0" gdb prints on load).
	loose, best GDBThread
	// pending is a frame line that may continue on the next lines.
	pending     strings.Builder
	pendingScan parenScan
	havePending bool
	inTable     bool // inside an `info threads` table
	banner      int  // thread number in "[Current thread is N ...]"
	frames      int
	found       bool
	limitErr    error
	lineNum     int
	lineOff     int64
}

func (p *gdbParser) line(lr *lineReader, s string) {
	// A wrapped frame continues on indented lines.
	if p.havePending && p.continuesFrame(s) {
		p.appendPending(strings.TrimSpace(s))
		return
	}
	p.flushFrame()
	p.lineNum, p.lineOff = lr.num, lr.off
	trimmed := strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "#"):
		if _, _, ok := splitFrameIndex(s); ok {
			p.inTable = false
			if len(s) > maxFrameText {
				s = s[:maxFrameText]
			}
			p.pending.Reset()
			p.pending.WriteString(s)
			p.pendingScan = parenScan{}
			p.pendingScan.feed(s)
			p.havePending = true
		}
	case strings.HasPrefix(s, "Thread ") && strings.HasSuffix(s, "):"):
		p.inTable = false
		p.threadHeader(s)
	case strings.HasPrefix(trimmed, "Backtrace stopped: "):
		p.frameThread().Stopped = strings.TrimPrefix(trimmed, "Backtrace stopped: ")
	case trimmed == "(More stack frames follow...)":
		p.frameThread().MoreFrames = true
	case isTableHeader(trimmed):
		p.inTable = true
		p.found = true
	case strings.HasPrefix(trimmed, "[Current thread is "):
		if n, ok := leadingInt(trimmed[len("[Current thread is "):]); ok {
			p.banner = n
		}
	case strings.Contains(s, " signal ") && p.signalLine(trimmed):
		p.inTable = false
	case p.inTable:
		p.tableRow(s)
	}
}

// frameThread is the thread that the last frames went to: a thread with a
// header, or the backtrace outside headers.
func (p *gdbParser) frameThread() *GDBThread {
	if p.ctx >= 0 {
		return &p.log.Threads[p.ctx]
	}
	return &p.loose
}

// continuesFrame reports whether line s continues the pending frame text:
// gdb indents continuation lines, and wraps inside the argument list or
// before " at FILE:LINE" and " from LIB".
func (p *gdbParser) continuesFrame(s string) bool {
	if s == "" || (s[0] != ' ' && s[0] != '\t') || p.pending.Len() >= maxFrameText {
		return false
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return false
	}
	if p.pendingScan.depth > 0 {
		return true
	}
	return strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "from ")
}

func (p *gdbParser) appendPending(t string) {
	f := p.pending.String()
	if !strings.HasSuffix(f, " ") && !strings.HasSuffix(f, "(") {
		p.pending.WriteByte(' ')
		p.pendingScan.feed(" ")
	}
	if room := maxFrameText - p.pending.Len(); len(t) > room {
		t = t[:max(room, 0)]
	}
	p.pending.WriteString(t)
	p.pendingScan.feed(t)
}

// flushFrame parses the pending frame line and files the frame.
func (p *gdbParser) flushFrame() {
	if !p.havePending {
		return
	}
	p.havePending = false
	f, ok := parseFrameLine(p.pending.String())
	p.pending.Reset()
	if !ok {
		return
	}
	if p.frames >= maxFrames {
		p.limit()
		return
	}
	p.frames++
	p.found = true
	if p.ctx >= 0 {
		t := &p.log.Threads[p.ctx]
		if n := len(t.Frames); n == 0 || f.Index > t.Frames[n-1].Index {
			t.Frames = append(t.Frames, f)
			return
		}
		// A new backtrace after this thread's own: a plain `bt`.
		p.ctx = -1
	}
	if n := len(p.loose.Frames); n > 0 && f.Index <= p.loose.Frames[n-1].Index {
		p.endLoose()
	}
	p.loose.Frames = append(p.loose.Frames, f)
}

// endLoose finishes the backtrace read outside thread headers, keeping the
// longest.
func (p *gdbParser) endLoose() {
	if n := len(p.loose.Frames); n > 0 && n >= len(p.best.Frames) {
		p.best = p.loose
	}
	p.loose = GDBThread{}
}

func (p *gdbParser) limit() {
	if p.limitErr == nil {
		p.limitErr = &ParseError{Line: p.lineNum, Offset: p.lineOff, Err: ErrLimit}
	}
}

// thread returns the index of thread num, adding it if it is new.
func (p *gdbParser) thread(num int) (int, bool) {
	if i, ok := p.byNum[num]; ok {
		return i, true
	}
	if len(p.log.Threads) >= maxThreads {
		p.limit()
		return 0, false
	}
	p.log.Threads = append(p.log.Threads, GDBThread{Num: num})
	p.byNum[num] = len(p.log.Threads) - 1
	return len(p.log.Threads) - 1, true
}

// threadHeader reads "Thread 3 (Thread 0x7f... (LWP 1234) "name"):" and
// "Thread 1 (LWP 99):", the headers of `thread apply all bt`.
func (p *gdbParser) threadHeader(s string) {
	rest := s[len("Thread "):]
	sp := strings.IndexByte(rest, ' ')
	if sp < 0 || !strings.HasPrefix(rest[sp:], " (") {
		return
	}
	num, ok := threadNum(rest[:sp])
	if !ok {
		return
	}
	target := rest[sp+2 : len(rest)-2]
	i, ok := p.thread(num)
	if !ok {
		return
	}
	p.found = true
	p.ctx = i
	p.endLoose()
	t := &p.log.Threads[i]
	lwp, name := parseTargetID(target)
	if t.LWP == 0 {
		t.LWP = lwp
	}
	if t.Name == "" {
		t.Name = name
	}
}

// tableRow reads one row of `info threads` (the current thread's marked
// with a star):
//
//	`* 1    Thread 0x7f2e246ae440 (LWP 7062) "name" add_next (...) at f.cpp:13`
//	`  2    LWP 7518          main () at demo.c:68`
func (p *gdbParser) tableRow(s string) {
	cur := false
	t := strings.TrimLeft(s, " ")
	if strings.HasPrefix(t, "*") {
		cur = true
		t = strings.TrimLeft(t[1:], " ")
	}
	sp := strings.IndexAny(t, " \t")
	if sp < 0 {
		return
	}
	num, ok := threadNum(t[:sp])
	if !ok {
		return
	}
	target := strings.TrimLeft(t[sp:], " \t")
	if !strings.HasPrefix(target, "Thread ") && !strings.HasPrefix(target, "LWP ") &&
		!strings.HasPrefix(target, "process ") {
		return
	}
	i, ok := p.thread(num)
	if !ok {
		return
	}
	th := &p.log.Threads[i]
	lwp, name := parseTargetID(target)
	if th.LWP == 0 {
		th.LWP = lwp
	}
	if th.Name == "" {
		th.Name = name
	}
	if cur {
		p.log.CurrentThread = num
	}
}

// isTableHeader matches the heading of `info threads`: "  Id   Target Id   Frame".
func isTableHeader(t string) bool {
	f := strings.Fields(t)
	return len(f) >= 3 && f[0] == "Id" && f[1] == "Target" && f[2] == "Id"
}

// signalLine reads "Program terminated with signal SIGSEGV, Segmentation
// fault." and the live forms "Program received signal ..." and
// "Thread 2 "name" received signal ...".
func (p *gdbParser) signalLine(t string) bool {
	var rest string
	for _, marker := range []string{"Program terminated with signal ", "received signal "} {
		if i := strings.Index(t, marker); i >= 0 {
			rest = t[i+len(marker):]
			break
		}
	}
	if rest == "" {
		return false
	}
	name, desc, _ := strings.Cut(rest, ", ")
	if name == "" || strings.ContainsAny(name, " \t") {
		return false
	}
	p.log.Signal = name
	p.log.SignalDesc = strings.TrimSuffix(desc, ".")
	p.found = true
	return true
}

// finish files the backtrace read outside headers and settles the current
// thread.
func (p *gdbParser) finish() {
	p.endLoose()
	if p.log.CurrentThread == 0 {
		p.log.CurrentThread = p.banner
	}
	if len(p.best.Frames) > 0 {
		if p.limitErr != nil && p.best.Stopped == "" {
			p.best.Stopped = fmt.Sprintf("faultline reads at most %d frames of a gdb log", maxFrames)
		}
		num := p.log.CurrentThread
		if num == 0 {
			if len(p.log.Threads) > 0 {
				num = p.log.Threads[0].Num
			} else {
				num = 1
			}
		}
		if i, ok := p.thread(num); ok && len(p.log.Threads[i].Frames) == 0 {
			t := &p.log.Threads[i]
			t.Frames, t.Stopped, t.MoreFrames = p.best.Frames, p.best.Stopped, p.best.MoreFrames
			if p.log.CurrentThread == 0 {
				p.log.CurrentThread = num
			}
		}
	}
}

// threadNum parses a gdb thread id, "3" or "1.3" (inferior.thread).
func threadNum(s string) (int, bool) {
	if _, t, ok := strings.Cut(s, "."); ok {
		s = t
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// parseTargetID reads the LWP and the quoted name from a target id such as
// `Thread 0x7f... (LWP 1234) "worker"`, `LWP 99` or `process 42`.
func parseTargetID(s string) (lwp int, name string) {
	for _, marker := range []string{"LWP ", "process "} {
		if i := strings.Index(s, marker); i >= 0 {
			if n, ok := leadingInt(s[i+len(marker):]); ok {
				lwp = n
				break
			}
		}
	}
	if i := strings.IndexByte(s, '"'); i >= 0 {
		if j := strings.IndexByte(s[i+1:], '"'); j >= 0 {
			name = s[i+1 : i+1+j]
		}
	}
	return lwp, name
}

// leadingInt parses the decimal digits at the start of s.
func leadingInt(s string) (int, bool) {
	n := 0
	for n < len(s) && n < 18 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, false
	}
	v, err := strconv.Atoi(s[:n])
	return v, err == nil
}
