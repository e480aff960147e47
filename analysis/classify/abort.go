package classify

import (
	"fmt"
	"strings"

	"github.com/ianlancetaylor/demangle"

	"github.com/faultline-dev/faultline/analysis/model"
)

// Functions that identify why abort() was called.
var (
	assertFunctions = map[string]bool{"__assert_fail": true, "__assert_fail_base": true, "__GI___assert_fail": true,
		"__assert_perror_fail": true, "__assert": true}
	mallocErrorFunctions = map[string]bool{"malloc_printerr": true}
	terminateFunctions   = map[string]bool{"std::terminate": true, "__cxxabiv1::__terminate": true, "__cxa_throw": true,
		"__gnu_cxx::__verbose_terminate_handler": true, "__cxa_rethrow": true, "__cxa_call_terminate": true,
		"__cxa_pure_virtual": true, "__cxa_deleted_virtual": true}
	fortifyFunctions = map[string]bool{"__fortify_fail": true, "__stack_chk_fail": true, "__chk_fail": true}
)

// abortFramesPresent reports whether the crashing stack goes through abort().
func (a *analyzer) abortFramesPresent() bool {
	for _, f := range a.frames {
		switch baseName(f.Function) {
		case "abort", "__GI_abort":
			return true
		}
	}
	return false
}

func (a *analyzer) hasFrame(set map[string]bool) (model.Frame, bool) {
	for _, f := range a.frames[a.start:] {
		if set[baseName(f.Function)] {
			return f, true
		}
	}
	return model.Frame{}, false
}

// abortKind classifies a SIGABRT by the runtime path that called abort()
// and recovers the runtime's message from memory.
func (a *analyzer) abortKind() {
	if r := a.runtimes(); r.SanitizerKind() || r.GoPanic() || r.RustPanic() || r.LibstdcxxCheck() || r.PythonFatal() {
		return
	}
	msg, haveMsg := a.abortMessage()
	if haveMsg {
		a.cls.Message = msg
		a.evidence("glibc's __abort_msg in the core: %q", msg)
	}
	_, isAssert := a.hasFrame(assertFunctions)
	_, isMalloc := a.hasFrame(mallocErrorFunctions)
	_, isTerminate := a.hasFrame(terminateFunctions)
	_, isFortify := a.hasFrame(fortifyFunctions)
	switch {
	case isAssert || strings.Contains(msg, "Assertion `"):
		a.cls.Kind = model.KindAssertion
		a.evidence("the stack goes through __assert_fail: a failed assert()")
		if expr, ok := assertionExpr(msg); ok {
			a.cls.Summary = fmt.Sprintf("Assertion `%s` failed in %s; the invariant it checks was broken earlier — find what made it false.", expr, a.where())
		} else {
			a.cls.Summary = fmt.Sprintf("Assertion failed in %s.", a.where())
		}
	case isMalloc || isMallocMessage(msg):
		a.cls.Kind = model.KindHeapCorruption
		a.evidence("the stack goes through malloc_printerr: glibc's allocator found its own data structures inconsistent")
		what := strings.TrimSpace(msg)
		if what == "" {
			what = "a heap consistency check failed"
		}
		a.cls.Summary = fmt.Sprintf("Heap corruption detected by glibc (%s) in %s; the damage was done earlier — run under ASan (-fsanitize=address) or valgrind to catch the bad write or free.", what, a.where())
	case isTerminate:
		a.terminateKind()
	case isFortify:
		a.cls.Kind = model.KindAbort
		a.cls.Summary = fmt.Sprintf("glibc's buffer-overflow protection aborted in %s (%s); a stack or buffer overflow was caught.", a.where(), orDefault(strings.TrimSpace(msg), "fortify check"))
	default:
		a.cls.Kind = model.KindAbort
		if haveMsg {
			a.cls.Summary = fmt.Sprintf("abort() in %s: %s", a.where(), strings.TrimSpace(msg))
		} else {
			a.cls.Summary = fmt.Sprintf("The program called abort() from %s.", a.where())
		}
	}
}

// terminateKind names why std::terminate was called: an uncaught
// exception, one escaping a noexcept function, a pure virtual call, a
// joinable std::thread destroyed, or a direct call.
func (a *analyzer) terminateKind() {
	a.cls.Kind = model.KindAbort
	typ, what := a.uncaughtException()
	defer a.exceptionEvidence(typ, what)
	_, pureVirtual := a.hasFrame(map[string]bool{"__cxa_pure_virtual": true, "__cxa_deleted_virtual": true})
	// The personality routine calls std::terminate itself when the
	// unwinder reaches a frame that must not throw (noexcept, a
	// destructor); an exception nothing catches makes __cxa_throw call it
	// after the unwinder returned.
	_, mustNotThrow := a.hasFrame(map[string]bool{"__cxa_call_terminate": true, "__gxx_personality_v0": true})
	_, threadDtor := a.hasFrame(map[string]bool{"std::thread::~thread": true})
	dtor := a.throwingDestructor()
	switch {
	case pureVirtual:
		a.evidence("the stack goes through __cxa_pure_virtual: a virtual call reached a pure virtual function")
		a.cls.Summary = fmt.Sprintf("Pure virtual call in %s: a virtual function was called on an object whose dynamic type is still (or again) the abstract base — a call from a base constructor or destructor, or through a deleted object.", a.where())
	case mustNotThrow && typ != "" && dtor >= 0:
		a.cls.CulpritFrame = dtor
		a.evidence("the personality routine (__gxx_personality_v0) called std::terminate: the exception reached the destructor %s, which is noexcept (destructors are, implicitly, since C++11)", a.where())
		a.cls.Summary = fmt.Sprintf("Exception %s escaped the destructor %s, which is noexcept (destructors are, implicitly), so std::terminate was called%s; no caller's catch can help — catch it inside the destructor, or move the throwing work out of it (a close() the caller calls).", typ, a.where(), whatSuffix(what))
	case mustNotThrow && typ != "":
		a.evidence("the stack goes through __cxa_call_terminate from the personality routine: the unwinder reached a frame that must not throw")
		a.cls.Summary = fmt.Sprintf("Exception %s thrown from %s escaped a noexcept function (or a destructor) on the stack, so std::terminate was called%s; catch it inside that function or drop its noexcept.", typ, a.where(), whatSuffix(what))
	case threadDtor:
		a.evidence("std::thread::~thread called std::terminate: the thread object was still joinable")
		a.cls.Summary = fmt.Sprintf("A std::thread was destroyed while still joinable in %s: join() or detach() it before it goes out of scope (std::jthread joins itself).", a.where())
	case typ != "":
		a.evidence("the stack goes through std::terminate: a C++ exception was not caught")
		a.cls.Summary = fmt.Sprintf("Uncaught C++ exception %s thrown from %s: catch it or prevent the error%s.", typ, a.where(), whatSuffix(what))
	default:
		a.evidence("the stack goes through std::terminate and no exception is in flight")
		a.cls.Summary = fmt.Sprintf("std::terminate called from %s without an active exception (a direct call, or `throw;` with nothing to rethrow).", a.where())
	}
}

// throwingDestructor is the index of the innermost destructor among the
// program's frames (-1 when none): the noexcept frame an exception
// escaped.
func (a *analyzer) throwingDestructor() int {
	for i := a.start; i < len(a.frames); i++ {
		f := a.frames[i]
		if !isRuntime(f) && strings.Contains(baseName(f.Function), "::~") {
			return i
		}
	}
	return -1
}

// exceptionEvidence records the exception in flight and glibc-style
// message for it.
func (a *analyzer) exceptionEvidence(typ, what string) {
	if typ == "" {
		return
	}
	m := "terminate called after throwing an instance of '" + typ + "'"
	if what != "" {
		m += "\n  what():  " + what
		a.evidence("the exception object is a %s; what() = %q", typ, what)
	} else {
		a.evidence("the exception object in flight is a %s", typ)
	}
	if a.cls.Message == "" {
		a.cls.Message = m
	}
}

func whatSuffix(what string) string {
	if what == "" {
		return ""
	}
	return fmt.Sprintf(" (what(): %q)", what)
}

func isMallocMessage(msg string) bool {
	for _, s := range []string{"double free", "free(): ", "malloc(): ", "realloc(): ", "corrupted ", "munmap_chunk", "malloc_consolidate"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// assertionExpr pulls the expression out of glibc's assertion message
// "prog: file:line: func: Assertion `expr' failed.".
func assertionExpr(msg string) (string, bool) {
	i := strings.Index(msg, "Assertion `")
	if i < 0 {
		return "", false
	}
	rest := msg[i+len("Assertion `"):]
	j := strings.LastIndex(rest, "' failed")
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

// maxAbortMsg caps the message read from __abort_msg.
const maxAbortMsg = 4096

// abortMessage reads glibc's __abort_msg: a pointer to struct abort_msg_s
// { unsigned int size; char msg[]; } that __libc_message (and through it
// __assert_fail and malloc_printerr) fills before calling abort()
// (glibc 2.36 sysdeps/posix/libc_fatal.c, assert/assert.c).
func (a *analyzer) abortMessage() (string, bool) {
	if a.p == nil {
		return "", false
	}
	sym, ok := a.p.SymbolAddress("__abort_msg")
	if !ok {
		return "", false
	}
	ptr, ok := a.readUint64(sym)
	if !ok || ptr == 0 {
		return "", false
	}
	size, ok := a.readUint32(ptr)
	if !ok || size <= 4 {
		return "", false
	}
	s, ok := a.readCString(ptr+4, min(int(size)-4, maxAbortMsg))
	if !ok {
		return "", false
	}
	return strings.TrimRight(s, "\n"), s != ""
}

// GCC's C++ exception header (libstdc++-v3/libsupc++/unwind-cxx.h): struct
// __cxa_exception holds the type_info pointer at offset 0 and ends with the
// _Unwind_Exception (offset 80, 32 bytes on x86-64) whose exception_class
// is "GNUCC++\0" (or "GNUCC++\x01" for a dependent exception); the thrown
// object follows it.
const (
	cxaUnwindHeader   = 80
	unwindHeaderSize  = 32
	gnuCxxClass       = 0x474e5543432b2b00 // "GNUCC++\0"
	gnuCxxDependent   = 0x474e5543432b2b01 // "GNUCC++\x01"
	exceptionScanSize = 64 << 10
)

// uncaughtException finds the exception in flight during std::terminate:
// __cxa_throw passes &header->unwindHeader down the unwinder, so a pointer
// to it is on the crashing thread's stack. It scans the stack for a word
// that points at the "GNUCC++" class, then reads the type_info's name and,
// for std::logic_error and std::runtime_error and their subclasses, what().
func (a *analyzer) uncaughtException() (typ, what string) {
	if a.p == nil || len(a.frames) == 0 || a.frames[0].Regs == nil {
		return "", ""
	}
	rsp := a.frames[0].Regs["rsp"]
	buf := make([]byte, exceptionScanSize)
	n, _ := a.p.ReadMemory(rsp, buf)
	seen := map[uint64]bool{}
	for off := 0; off+8 <= n; off += 8 {
		w := le64(buf[off:])
		if w < nullLimit || w%8 != 0 || seen[w] {
			continue
		}
		seen[w] = true
		class, ok := a.readUint64(w)
		if !ok || (class != gnuCxxClass && class != gnuCxxDependent) {
			continue
		}
		header := w - cxaUnwindHeader
		object := w + unwindHeaderSize
		if class == gnuCxxDependent {
			// __cxa_dependent_exception (std::rethrow_exception) keeps the
			// primary object's pointer in its first word.
			p, ok := a.readUint64(header)
			if !ok || p < cxaUnwindHeader+unwindHeaderSize {
				continue
			}
			object = p
			header = p - unwindHeaderSize - cxaUnwindHeader
		}
		ti, ok := a.readUint64(header)
		if !ok || ti == 0 {
			continue
		}
		namePtr, ok := a.readUint64(ti + 8)
		if !ok {
			continue
		}
		name, ok := a.readCString(namePtr, 512)
		if !ok || name == "" {
			continue
		}
		typ = demangleType(strings.TrimPrefix(name, "*"))
		if stdExceptionWithMessage[typ] {
			if msgPtr, ok := a.readUint64(object + 8); ok {
				what, _ = a.readCString(msgPtr, 1024)
			}
		}
		return typ, what
	}
	return "", ""
}

// stdExceptionWithMessage are the libstdc++ exceptions laid out as
// { vptr; __cow_string _M_msg; }, whose _M_msg points at the what() text.
var stdExceptionWithMessage = map[string]bool{
	"std::logic_error": true, "std::domain_error": true, "std::invalid_argument": true, "std::length_error": true,
	"std::out_of_range": true, "std::runtime_error": true, "std::range_error": true, "std::overflow_error": true,
	"std::underflow_error": true,
}

// demangleType turns a type_info name ("St12out_of_range") into C++.
func demangleType(name string) string {
	if s, err := demangle.ToString("_Z" + name); err == nil {
		return s
	}
	if s, err := demangle.ToString("_ZTS" + name); err == nil {
		return strings.TrimPrefix(s, "typeinfo name for ")
	}
	return name
}
