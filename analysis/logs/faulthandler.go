package logs

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// FaulthandlerLog is what CPython's faulthandler printed when the process
// received a fatal signal (or when faulthandler.dump_traceback_later's
// timeout fired): every thread's Python stack, the current thread marked.
// The format is Python/traceback.c's (_Py_DumpTracebackThreads), the same
// from 3.8 to 3.14.
type FaulthandlerLog struct {
	// Error is the fatal error's text: "Segmentation fault" in "Fatal
	// Python error: Segmentation fault", or "Timeout (0:00:05)!" for a
	// dump_traceback_later timeout.
	Error string
	// Signal names the signal Error describes ("SIGSEGV"), "" for other
	// errors.
	Signal string
	// Threads lists the threads in the order printed.
	Threads []PyThread
	// Extensions lists the "Extension modules:" line's modules (3.12+, and
	// Debian's 3.11).
	Extensions []string
	// Prefix is a per-line prefix the log carried and the parser removed
	// ("[rank3]:" from torchrun), "" when none.
	Prefix string
}

// PyThread is one thread of a faulthandler dump.
type PyThread struct {
	// ID is the thread's pthread_t ("Thread 0x00007f...": PyThreadState's
	// thread_id), 0 for a bare "Stack (most recent call first):".
	ID uint64
	// Current marks "Current thread 0x...": the thread that crashed.
	Current bool
	// Frames lists the Python frames, innermost first.
	Frames []PyFrame
	// Truncated is set when faulthandler printed "..." (more than 100
	// frames) or "<truncated>".
	Truncated bool
}

// PyFrame is one Python frame of a faulthandler dump or a traceback.
type PyFrame struct {
	File     string
	Line     int
	Function string
	// Source is the source line a traceback printed under the frame.
	Source string
}

// ErrNotFaulthandler is wrapped by ParseFaulthandler's error for input with
// no faulthandler thread dump.
var ErrNotFaulthandler = errors.New("no faulthandler output found")

// Caps on what one log may make us keep.
const (
	maxPyLineLen = 8 << 10
	maxPyThreads = 4096
	maxPyFrames  = 4096 // per thread or traceback
	maxLogLines  = 1 << 24
)

var (
	fhFatalRe   = lazyregexp.New(`^Fatal Python error: (.*)$`)
	fhTimeoutRe = lazyregexp.New(`^Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!$`)
	fhThreadRe  = lazyregexp.New(`^(Current thread|Thread) (0x[0-9a-fA-F]+)(?: \[[^\]]*\])? \(most recent call first\):$`)
	fhStackRe   = lazyregexp.New(`^Stack \(most recent call first\):$`)
	fhFrameRe   = lazyregexp.New(`^  File "(.*)", line (-?\d+|\?\?\?) in (.*)$`)
	fhExtRe     = lazyregexp.New(`^Extension modules: (.*?)(?: \(total: \d+\))?$`)
	rankRe      = lazyregexp.New(`^\[(?:rank|default)\d+\]: ?`)
)

// faulthandler's names for the fatal signals it handles
// (Modules/faulthandler.c, faulthandler_handlers).
var fhSignals = map[string]string{
	"Segmentation fault":       "SIGSEGV",
	"Aborted":                  "SIGABRT",
	"Bus error":                "SIGBUS",
	"Floating point exception": "SIGFPE",
	"Illegal instruction":      "SIGILL",
}

// ParseFaulthandler reads the first faulthandler dump in a log (a job's
// stderr, with anything around it). Lines it does not recognise are skipped.
func ParseFaulthandler(r io.Reader) (*FaulthandlerLog, error) {
	lr := newLineReader(r, maxPyLineLen)
	log := &FaulthandlerLog{}
	var cur *PyThread
	started, haveCurrent := false, false
	for n := 0; n < maxLogLines; n++ {
		line, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		line = cleanLine(line)
		if p := rankRe.FindString(line); p != "" {
			if log.Prefix == "" {
				log.Prefix = strings.TrimSpace(p)
			}
			line = line[len(p):]
		}
		switch {
		case fhFatalRe.MatchString(line):
			if started && len(log.Threads) > 0 {
				return log, nil // a second dump: keep the first
			}
			started = true
			log.Error = fhFatalRe.FindStringSubmatch(line)[1]
			log.Signal = fhSignals[log.Error]
			cur = nil
		case fhTimeoutRe.MatchString(line):
			if started && len(log.Threads) > 0 {
				return log, nil
			}
			started = true
			log.Error = line
			cur = nil
		case fhThreadRe.MatchString(line) || fhStackRe.MatchString(line):
			cur = log.addThread(line, &haveCurrent)
		case cur != nil && fhFrameRe.MatchString(line):
			m := fhFrameRe.FindStringSubmatch(line)
			ln, _ := strconv.Atoi(m[2]) // "???" stays 0
			if len(cur.Frames) < maxPyFrames {
				cur.Frames = append(cur.Frames, PyFrame{File: m[1], Line: max(ln, 0), Function: m[3]})
			} else {
				cur.Truncated = true
			}
		case cur != nil && (line == "  ..." || line == "  <truncated>"):
			cur.Truncated = true
		case cur != nil && line == "  <no Python frame>":
		case fhExtRe.MatchString(line):
			for _, e := range strings.Split(fhExtRe.FindStringSubmatch(line)[1], ", ") {
				if e = strings.TrimSpace(e); e != "" && len(log.Extensions) < 1024 {
					log.Extensions = append(log.Extensions, e)
				}
			}
			cur = nil
		default:
			if line == "" || !strings.HasPrefix(line, "  ") {
				cur = nil
			}
		}
	}
	if len(log.Threads) == 0 {
		return nil, fmt.Errorf("%w (no \"Thread 0x... (most recent call first):\" section)", ErrNotFaulthandler)
	}
	return log, nil
}

// addThread starts the thread a header line names and returns it, or nil
// when the thread cap leaves it out. The crashing ("Current thread")
// thread is kept whatever the cap, in the place of the last other thread
// kept: decoy threads printed before it cannot hide it.
func (log *FaulthandlerLog) addThread(line string, haveCurrent *bool) *PyThread {
	t := PyThread{}
	if m := fhThreadRe.FindStringSubmatch(line); m != nil {
		t.Current = m[1] == "Current thread"
		t.ID, _ = strconv.ParseUint(m[2][2:], 16, 64)
	}
	if len(log.Threads) >= maxPyThreads {
		if !t.Current || *haveCurrent {
			return nil
		}
		log.Threads = log.Threads[:maxPyThreads-1]
	}
	*haveCurrent = *haveCurrent || t.Current
	log.Threads = append(log.Threads, t)
	return &log.Threads[len(log.Threads)-1]
}
