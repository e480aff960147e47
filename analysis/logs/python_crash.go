package logs

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/python"
)

// ReadFaulthandlerCrash reads CPython faulthandler output: every thread with
// its Python frames, the current thread crashed.
func ReadFaulthandlerCrash(path string, open func() (io.ReadCloser, error)) (*model.Crash, bool, error) {
	r, err := open()
	if err != nil {
		return nil, false, err
	}
	fh, err := ParseFaulthandler(r)
	r.Close()
	if errors.Is(err, ErrNotFaulthandler) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	c := &model.Crash{Schema: model.Schema, Dump: model.Dump{Path: path, Format: "faulthandler"}, Threads: []model.Thread{},
		Modules: []model.Module{}, Problems: []model.Problem{}}
	if n, ok := model.SignalNumber(fh.Signal); ok {
		c.Signal = &model.Signal{Number: n, Name: fh.Signal}
	}
	for _, t := range fh.Threads {
		th := model.Thread{ID: int(t.ID), Crashed: t.Current && c.Signal != nil, Frames: pythonFrames(t.Frames)}
		if t.ID != 0 {
			th.Name = fmt.Sprintf("%#x", t.ID) // pthread_t, as faulthandler prints it
		}
		if t.Truncated {
			th.Truncated = "faulthandler prints at most 100 frames per thread"
		}
		if t.Current {
			c.CrashingThreadID = th.ID
		}
		c.Threads = append(c.Threads, th)
	}
	c.Problems = append(c.Problems, model.Problem{Message: "faulthandler output holds Python frames only: " +
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
	c.Classification = cls
	cls.Message = "Fatal Python error: " + fh.Error
	if fh.Signal == "" && kind == model.KindHang {
		cls.Message = fh.Error
	}
	if f := c.Culprit(); f != nil {
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
	return c, true, nil
}

// tracebacksOf parses the log's Python tracebacks, nil when there are none.
func tracebacksOf(open func() (io.ReadCloser, error)) *TracebackLog {
	r, err := open()
	if err != nil {
		return nil
	}
	defer r.Close()
	tb, err := ParseTracebacks(r)
	if err != nil {
		return nil
	}
	return tb
}

// ReadTracebackCrash reads uncaught Python exceptions: each traceback is a
// thread (the frames of one exception), the last one the crash.
func ReadTracebackCrash(path string, open func() (io.ReadCloser, error)) (*model.Crash, bool, error) {
	tb := tracebacksOf(open)
	if tb == nil {
		return nil, false, nil
	}
	c := &model.Crash{Schema: model.Schema, Dump: model.Dump{Path: path, Format: "python-traceback"}, Threads: []model.Thread{},
		Modules: []model.Module{}, Problems: []model.Problem{}}
	for i, t := range tb.Tracebacks {
		th := model.Thread{ID: i + 1, Frames: pythonFrames(t.Frames), Name: t.Exception}
		if t.Thread != "" {
			th.Name = t.Thread + ": " + t.Exception
		}
		if i == len(tb.Tracebacks)-1 {
			th.Crashed = true
			c.CrashingThreadID = th.ID
		}
		c.Threads = append(c.Threads, th)
	}
	final := tb.Final()
	cls := pythonClassification(c, model.KindUnknown)
	c.Classification = cls
	cls.Message = final.Exception
	if f := c.Culprit(); f != nil {
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
	return c, true, nil
}

// pythonFrames converts a log's Python frames (innermost first).
func pythonFrames(fs []PyFrame) []model.Frame {
	out := make([]model.Frame, 0, len(fs))
	for i, f := range fs {
		out = append(out, model.Frame{Index: i, Function: f.Function, File: f.File, Line: f.Line, Language: python.Language})
	}
	return out
}

// pythonClassification classifies a crash read from a Python log. The log
// has no registers or memory, so the kind comes from the signal alone; the
// culprit is the innermost frame of the program's own code (not the
// standard library's), and the signature is it and its caller.
func pythonClassification(c *model.Crash, kind string) *model.Classification {
	cls := &model.Classification{Kind: kind, Context: model.ContextRuntime, CulpritFrame: -1, Evidence: []string{}}
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

// crashingThread is the thread a Python log's crash is read from: the
// one that crashed, or in a log without a signal (an uncaught exception,
// a timeout) the one the log marks current.
func crashingThread(c *model.Crash) *model.Thread {
	if c.Signal == nil {
		return c.Thread(c.CrashingThreadID)
	}
	return c.CrashingThread()
}

// ownFrame indexes the innermost frame outside the Python library, else
// the innermost frame; -1 for no frames.
func ownFrame(fs []model.Frame) int {
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
