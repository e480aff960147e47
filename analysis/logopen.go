package analysis

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/python"
)

// errNoMemory is Session.ReadMemory's error for a dump read from a log.
var errNoMemory = errors.New("this dump is a log: it holds no process memory")

// logReader turns a text log into the crash model; ok is false when the
// log is not of its kind.
type logReader func(path string, open func() (io.ReadCloser, error)) (c *Crash, ok bool, err error)

// logReaders are tried in order on a text log.
var logReaders = []logReader{readFaulthandlerLog, readTracebackLog, readGDBLog}

// openLog opens path when it is a text log (plain or gzip'd) rather than a
// binary dump: ok is false for anything else, which OpenSession then reads
// as a core. A text log that no reader recognises is an error that says
// which logs faultline reads.
func openLog(path string, opt Options) (*Session, bool, error) {
	_ = opt // logs name no files to locate
	open := func() (io.ReadCloser, error) { return openMaybeGzip(path) }
	if !isTextFile(open) {
		return nil, false, nil
	}
	for _, read := range logReaders {
		c, ok, err := read(path, open)
		if err != nil {
			return nil, true, fmt.Errorf("%s: %w", path, err)
		}
		if ok {
			return &Session{Crash: c}, true, nil
		}
	}
	return nil, true, fmt.Errorf("%s is a text file with no crash faultline can read "+
		"(faulthandler output, a Python traceback or a gdb backtrace)", path)
}

// openMaybeGzip opens a file, through gzip when it starts with gzip's magic.
func openMaybeGzip(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(f)
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, err
		}
		return readCloser{zr, f}, nil
	}
	return readCloser{br, f}, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// isTextFile says whether the file's first 4 KiB look like text: no NUL
// byte, no ELF magic, and mostly valid UTF-8 (a cut at the end is fine).
func isTextFile(open func() (io.ReadCloser, error)) bool {
	r, err := open()
	if err != nil {
		return false
	}
	defer r.Close()
	b := make([]byte, 4096)
	n, _ := io.ReadFull(r, b)
	b = b[:n]
	if n == 0 || bytes.HasPrefix(b, []byte("\x7fELF")) || bytes.IndexByte(b, 0) >= 0 {
		return false
	}
	bad := 0
	for len(b) > 0 {
		rn, size := utf8.DecodeRune(b)
		if rn == utf8.RuneError && size <= 1 && len(b) >= utf8.UTFMax {
			bad++
		}
		b = b[max(size, 1):]
	}
	return bad*100 < n // under 1% invalid bytes
}

// readFaulthandlerLog reads CPython faulthandler output: every thread with
// its Python frames, the current thread crashed.
func readFaulthandlerLog(path string, open func() (io.ReadCloser, error)) (*Crash, bool, error) {
	r, err := open()
	if err != nil {
		return nil, false, err
	}
	fh, err := logs.ParseFaulthandler(r)
	r.Close()
	if errors.Is(err, logs.ErrNotFaulthandler) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	c := &Crash{Schema: Schema, Dump: Dump{Path: path, Format: "faulthandler"}, Threads: []Thread{},
		Modules: []Module{}, Problems: []Problem{}}
	if n, ok := signalNumber(fh.Signal); ok {
		c.Signal = &Signal{Number: n, Name: fh.Signal}
	}
	for _, t := range fh.Threads {
		th := Thread{ID: int(t.ID), Crashed: t.Current && c.Signal != nil, Frames: pythonFrames(t.Frames)}
		if t.ID != 0 {
			th.Name = fmt.Sprintf("%#x", t.ID) // pthread_t, as faulthandler prints it
		}
		if t.Truncated {
			th.Truncated = "faulthandler prints at most 100 frames per thread"
		}
		if t.Current {
			c.CrashingThread = th.ID
		}
		c.Threads = append(c.Threads, th)
	}
	c.Problems = append(c.Problems, Problem{Message: "faulthandler output holds Python frames only: " +
		"the core dump of the same crash has the native frames too (`faultline run` keeps both)"})
	kind, what := model.KindUnknown, "a fatal error"
	switch fh.Signal {
	case "SIGABRT":
		kind, what = model.KindAbort, "SIGABRT (abort)"
	case "SIGFPE":
		kind, what = model.KindDivideByZero, "SIGFPE (arithmetic exception)"
	case "SIGILL":
		kind, what = model.KindIllegalInstruction, "SIGILL (illegal instruction)"
	case "SIGBUS":
		kind, what = model.KindBusError, "SIGBUS (bus error)"
	case "SIGSEGV":
		what = "SIGSEGV (segmentation fault)"
	case "":
		if strings.HasPrefix(fh.Error, "Timeout") {
			kind, what = model.KindHang, "a faulthandler timeout (dump_traceback_later)"
		}
	}
	cls := pythonClassification(c, kind)
	cls.Message = "Fatal Python error: " + fh.Error
	if fh.Signal == "" && kind == model.KindHang {
		cls.Message = fh.Error
	}
	if f := culpritFrame(c); f != nil {
		cls.Summary = fmt.Sprintf("%s in native code called from %s (%s:%d); faulthandler shows only Python "+
			"frames: the core dump of the same crash has the native ones.", what, f.Function, filepath.Base(f.File), f.Line)
		if kind == model.KindHang {
			cls.Summary = fmt.Sprintf("The job was stuck (%s) in %s (%s:%d).", what, f.Function, filepath.Base(f.File), f.Line)
		}
	}
	cls.Evidence = append(cls.Evidence, "faulthandler: "+cls.Message)
	if len(fh.Extensions) > 0 {
		cls.Evidence = append(cls.Evidence, fmt.Sprintf("extension modules loaded: %s", strings.Join(fh.Extensions, ", ")))
	}
	if tb := tracebacksOf(open); tb != nil {
		cls.Evidence = append(cls.Evidence, fmt.Sprintf("the log also holds %d Python traceback(s); the last: %s",
			len(tb.Tracebacks), tb.Final().Exception))
	}
	c.Classification = cls
	return c, true, nil
}

// tracebacksOf parses the log's Python tracebacks, nil when there are none.
func tracebacksOf(open func() (io.ReadCloser, error)) *logs.TracebackLog {
	r, err := open()
	if err != nil {
		return nil
	}
	defer r.Close()
	tb, err := logs.ParseTracebacks(r)
	if err != nil {
		return nil
	}
	return tb
}

// readTracebackLog reads uncaught Python exceptions: each traceback is a
// thread (the frames of one exception), the last one the crash.
func readTracebackLog(path string, open func() (io.ReadCloser, error)) (*Crash, bool, error) {
	tb := tracebacksOf(open)
	if tb == nil {
		return nil, false, nil
	}
	c := &Crash{Schema: Schema, Dump: Dump{Path: path, Format: "python-traceback"}, Threads: []Thread{},
		Modules: []Module{}, Problems: []Problem{}}
	for i, t := range tb.Tracebacks {
		th := Thread{ID: i + 1, Frames: pythonFrames(t.Frames), Name: t.Exception}
		if t.Thread != "" {
			th.Name = t.Thread + ": " + t.Exception
		}
		if i == len(tb.Tracebacks)-1 {
			th.Crashed = true
			c.CrashingThread = th.ID
		}
		c.Threads = append(c.Threads, th)
	}
	final := tb.Final()
	cls := pythonClassification(c, model.KindUnknown)
	cls.Message = final.Exception
	if f := culpritFrame(c); f != nil {
		cls.Summary = fmt.Sprintf("Uncaught Python exception %s in %s (%s:%d).",
			final.Exception, f.Function, filepath.Base(f.File), f.Line)
	}
	cls.Evidence = append(cls.Evidence, "uncaught exception: "+final.Exception)
	for i := len(tb.Tracebacks) - 2; i >= 0 && tb.Tracebacks[i].Chained != ""; i-- {
		how := "the direct cause: "
		if tb.Tracebacks[i].Chained == "context" {
			how = "raised while handling: "
		}
		cls.Evidence = append(cls.Evidence, how+tb.Tracebacks[i].Exception)
	}
	if others := len(tb.Tracebacks) - 1; others > 0 {
		cls.Evidence = append(cls.Evidence, fmt.Sprintf("%d earlier traceback(s) in the log are threads %d-%d", others, 1, others))
	}
	c.Classification = cls
	return c, true, nil
}

// pythonFrames converts a log's Python frames (innermost first).
func pythonFrames(fs []logs.PyFrame) []Frame {
	out := make([]Frame, 0, len(fs))
	for i, f := range fs {
		out = append(out, Frame{Index: i, Function: f.Function, File: f.File, Line: f.Line, Language: python.Language})
	}
	return out
}

// pythonClassification classifies a crash read from a Python log. The log
// has no registers or memory, so the kind comes from the signal alone; the
// culprit is the innermost frame of the program's own code (not the
// standard library's), and the signature is it and its caller.
func pythonClassification(c *Crash, kind string) *Classification {
	cls := &Classification{Kind: kind, Context: model.ContextRuntime, CulpritFrame: -1, Evidence: []string{}}
	t := crashingThread(c)
	if t == nil {
		cls.Signature = kind
		return cls
	}
	cls.CulpritFrame = ownFrame(t.Frames)
	var sig []string
	for i := max(cls.CulpritFrame, 0); i < len(t.Frames) && len(sig) < 2; i++ {
		sig = append(sig, t.Frames[i].Function)
	}
	cls.Signature = strings.Join(sig, " | ")
	return cls
}

func crashingThread(c *Crash) *Thread {
	for i := range c.Threads {
		if c.Threads[i].ID == c.CrashingThread && (c.Threads[i].Crashed || c.Signal == nil) {
			return &c.Threads[i]
		}
	}
	return nil
}

// culpritFrame returns the crashing thread's innermost frame of the
// program's own code (else its innermost frame), nil when it has none.
func culpritFrame(c *Crash) *Frame {
	t := crashingThread(c)
	if t == nil {
		return nil
	}
	if i := ownFrame(t.Frames); i >= 0 {
		return &t.Frames[i]
	}
	return nil
}

// ownFrame indexes the innermost frame outside the Python library, else
// the innermost frame; -1 for no frames.
func ownFrame(fs []Frame) int {
	for i, f := range fs {
		if !isPythonLibrary(f.File) {
			return i
		}
	}
	if len(fs) > 0 {
		return 0
	}
	return -1
}

// isPythonLibrary says whether a Python source path is the interpreter's
// own library (…/lib/python3.11/threading.py, <frozen importlib._bootstrap>)
// rather than the program's code; site-packages are the program's.
func isPythonLibrary(file string) bool {
	if strings.HasPrefix(file, "<frozen ") {
		return true
	}
	if strings.Contains(file, "/site-packages/") || strings.Contains(file, "/dist-packages/") {
		return false
	}
	return strings.Contains(file, "/lib/python3")
}
