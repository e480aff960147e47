package runtimemsg

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/model"
)

// CPython's fatal errors (Python/pylifecycle.c): Py_FatalError(msg),
// _Py_FatalErrorFunc(func, msg) (what Py_FatalError expands to, func being
// __func__) and _Py_FatalErrorFormat(func, format, ...) print "Fatal
// Python error: FUNC: MSG" and abort(). The caller sets the function's
// name and the message up as constants right before the call (a helper
// like _Py_FatalError_TstateNULL(func) passes func on from its own
// caller).

// pythonFatalFunctions maps CPython's fatal-error entry points to the
// registers holding func and the message ("" where it takes none).
var pythonFatalFunctions = map[string]struct{ funcReg, msgReg string }{
	"_Py_FatalErrorFunc":         {"rdi", "rsi"},
	"_Py_FatalErrorFormat":       {"rdi", "rsi"},
	"Py_FatalError":              {"", "rdi"},
	"_Py_FatalError_TstateNULL":  {"rdi", ""},
	"_Py_FatalRefcountErrorFunc": {"rdi", "rsi"},
}

// PythonFatal classifies a CPython fatal error and reports whether the
// stack has one.
func (a *Reader) PythonFatal() bool {
	k := -1
	for i := a.start; i < len(a.frames); i++ {
		if _, ok := pythonFatalFunctions[BaseName(a.frames[i].Function)]; ok {
			k = i
			break
		}
	}
	if k < 0 {
		return false
	}
	a.cls.Kind = model.KindAssertion
	*a.noForeignNote = true
	a.evidence("the stack goes through %s: CPython found its own state broken and aborted (a fatal error)", BaseName(a.frames[k].Function))
	msg := a.pythonFatalMessage(k)
	if msg != "" {
		a.cls.Message = "Fatal Python error: " + msg
		a.evidence("its arguments, set up as constants before the calls: %q", a.cls.Message)
	} else {
		msg = "its message is on stderr"
	}
	if a.cls.Context == model.ContextExitTime || a.exitTime() {
		a.cls.Summary = fmt.Sprintf("Fatal Python error in %s at exit: %s — native code called into Python after the interpreter was finalized (a static object destroyed at exit); release it before Python finalizes (an atexit handler, or a py::capsule that owns it), or leak it on purpose.", a.where(), msg)
		return true
	}
	a.cls.Summary = fmt.Sprintf("Fatal Python error in %s: %s — the extension broke an interpreter rule (a call without the GIL, a reference count gone wrong).", a.where(), msg)
	return true
}

// pythonFatalMessage reads "FUNC: MSG" from the constants the callers of
// frame k (and of the frames it passes them on to) set up.
func (a *Reader) pythonFatalMessage(k int) string {
	if a.p == nil || !a.x86() {
		return ""
	}
	var fn, msg string
	for i := k; i < len(a.frames)-1 && i < k+3 && (fn == "" || msg == ""); i++ {
		regs, ok := pythonFatalFunctions[BaseName(a.frames[i].Function)]
		if i > k && !ok {
			regs = struct{ funcReg, msgReg string }{"rdi", ""} // a helper passing func on
		}
		args := a.callArguments(a.frames[i+1].Addr)
		if s, ok := a.readCString(args[regs.msgReg], 1024); ok && regs.msgReg != "" && msg == "" {
			msg = s
		}
		if s, ok := a.readCString(args[regs.funcReg], 256); ok && regs.funcReg != "" && fn == "" {
			fn = s
		}
	}
	switch {
	case msg == "":
		return ""
	case fn == "":
		return msg
	}
	return fn + ": " + msg
}
