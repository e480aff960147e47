package logs

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// Traceback is one Python traceback as the interpreter prints an uncaught
// exception (Lib/traceback.py, Python/traceback.c): "Traceback (most recent
// call last):", the frames, the exception line.
type Traceback struct {
	// Thread is the thread named by "Exception in thread NAME:" before it
	// (threading.excepthook), "" for the main thread.
	Thread string
	// Frames lists the frames innermost first (the reverse of the log).
	Frames []PyFrame
	// Exception is the exception line, "RuntimeError: bad config".
	Exception string
	// Chained says how the next traceback in the log relates to this one:
	// "cause" ("The above exception was the direct cause..."), "context"
	// ("During handling of the above exception..."), or "" when the next
	// is a separate exception.
	Chained string
	// Prefix is the per-line prefix removed ("[rank3]:"), if any.
	Prefix string
}

// TracebackLog is every traceback of a log, in log order.
type TracebackLog struct {
	Tracebacks []Traceback
}

// Final returns the last traceback that is not the cause or context of a
// later one: the exception that ended the program, or nil.
func (l *TracebackLog) Final() *Traceback {
	if len(l.Tracebacks) == 0 {
		return nil
	}
	return &l.Tracebacks[len(l.Tracebacks)-1]
}

// ErrNotTraceback is wrapped by ParseTracebacks' error for input with no
// Python traceback.
var ErrNotTraceback = errors.New("no Python traceback found")

const maxTracebacks = 4096

var (
	tbStartRe  = lazyregexp.New(`^Traceback \(most recent call last\):$`)
	tbFrameRe  = lazyregexp.New(`^  File "(.*)", line (\d+), in (.*)$`)
	tbThreadRe = lazyregexp.New(`^Exception in thread (.*?)(?: \(.*\))?:$`)
	tbRepeatRe = lazyregexp.New(`^  \[Previous line repeated (\d+) more times?\]$`)
	tbExcRe    = lazyregexp.New(`^[A-Za-z_][\w.]*(?:: .*|:)?$`)
)

const (
	tbCauseLine   = "The above exception was the direct cause of the following exception:"
	tbContextLine = "During handling of the above exception, another exception occurred:"
)

// ParseTracebacks reads every Python traceback in a log. Lines around and
// between them are skipped, as are exception-group boxes ("| ...") it does
// not unpack.
func ParseTracebacks(r io.Reader) (*TracebackLog, error) {
	lr := newLineReader(r, maxPyLineLen)
	p := &tracebackParser{out: &TracebackLog{}}
	for n := 0; n < maxLogLines; n++ {
		line, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		line = cleanLine(line)
		linePrefix := ""
		if pre := rankRe.FindString(line); pre != "" {
			linePrefix = strings.TrimSpace(pre)
			line = line[len(pre):]
		}
		p.line(line, linePrefix)
	}
	p.finish("")
	if len(p.out.Tracebacks) == 0 {
		return nil, fmt.Errorf("%w (no \"Traceback (most recent call last):\" line)", ErrNotTraceback)
	}
	return p.out, nil
}

// tracebackParser is the state of ParseTracebacks between lines.
type tracebackParser struct {
	out    *TracebackLog
	cur    *Traceback // the traceback whose frames are being read
	frames []PyFrame
	thread string // of the traceback that follows ("Exception in thread")
	chain  string // how the traceback that follows is chained to the one before
}

// line reads one line of the log, its rank prefix (linePrefix) removed.
func (p *tracebackParser) line(line, linePrefix string) {
	switch {
	case tbStartRe.MatchString(line):
		p.finish("")
		p.cur = &Traceback{Thread: p.thread, Prefix: linePrefix}
		if tbs := p.out.Tracebacks; p.chain != "" && len(tbs) > 0 {
			tbs[len(tbs)-1].Chained = p.chain
			p.cur.Thread = tbs[len(tbs)-1].Thread
		}
		p.thread, p.chain = "", ""
	case tbThreadRe.MatchString(line):
		p.finish("")
		p.thread = tbThreadRe.FindStringSubmatch(line)[1]
	case line == tbCauseLine:
		p.chain = "cause"
	case line == tbContextLine:
		p.chain = "context"
	case p.cur == nil:
		if strings.TrimSpace(line) != "" {
			p.thread = "" // "Exception in thread" is followed by its traceback at once
		}
	default:
		p.tracebackLine(line)
	}
}

// tracebackLine reads a line inside a traceback: a frame, its source, or
// the exception that ends it.
func (p *tracebackParser) tracebackLine(line string) {
	switch {
	case tbFrameRe.MatchString(line):
		m := tbFrameRe.FindStringSubmatch(line)
		ln, _ := strconv.Atoi(m[2])
		if len(p.frames) < maxPyFrames {
			p.frames = append(p.frames, PyFrame{File: m[1], Line: ln, Function: m[3]})
		}
	case strings.HasPrefix(line, "    "):
		// The source line under a frame, or the carets under it.
		if k := len(p.frames); k > 0 && p.frames[k-1].Source == "" {
			if src := strings.TrimSpace(line); strings.Trim(src, "^~ ") != "" {
				p.frames[k-1].Source = src
			}
		}
	case tbRepeatRe.MatchString(line):
	case tbExcRe.MatchString(line):
		p.finish(line)
	case strings.TrimSpace(line) == "":
		// Blank lines inside a traceback do not end it (SyntaxError's
		// caret block); the exception line does.
	default:
		// An exception-group box or text we do not know: end here.
		p.finish(strings.TrimSpace(line))
	}
}

// finish ends the current traceback with exception exc.
func (p *tracebackParser) finish(exc string) {
	if p.cur == nil {
		return
	}
	frames := p.frames
	for i, j := 0, len(frames)-1; i < j; i, j = i+1, j-1 {
		frames[i], frames[j] = frames[j], frames[i]
	}
	p.cur.Frames, p.cur.Exception = frames, exc
	if len(p.out.Tracebacks) < maxTracebacks {
		p.out.Tracebacks = append(p.out.Tracebacks, *p.cur)
	}
	p.cur, p.frames = nil, nil
}
