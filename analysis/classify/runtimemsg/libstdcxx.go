package runtimemsg

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/analysis/disasm"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// libstdc++'s own checks end in abort() too: a _GLIBCXX_ASSERTIONS
// precondition (std::__glibcxx_assert_fail(file, line, function,
// condition), gcc 12.3+ and bookworm's 12.2) and a _GLIBCXX_DEBUG
// safe-container check (__gnu_debug::_Error_formatter::_M_error()). Both
// are assertions; their text is read from the call's arguments and from
// the _Error_formatter.

// glibcxxAssertFunctions report a failed _GLIBCXX_ASSERTIONS check.
var glibcxxAssertFunctions = map[string]bool{"std::__glibcxx_assert_fail": true, "std::__replacement_assert": true}

// LibstdcxxCheck classifies a failed libstdc++ assertion or debug-mode
// check and reports whether the stack has one.
func (a *Reader) LibstdcxxCheck() bool {
	for i := a.start; i < len(a.frames); i++ {
		if glibcxxAssertFunctions[BaseName(a.frames[i].Function)] {
			a.glibcxxAssert(i)
			return true
		}
	}
	for _, f := range a.frames[a.start:] {
		if BaseName(f.Function) == "__gnu_debug::_Error_formatter::_M_error" || debugModeFile.MatchString(f.File) {
			a.debugModeCheck()
			return true
		}
	}
	return false
}

// debugModeFile matches the headers of libstdc++'s debug mode.
var debugModeFile = lazyregexp.New(`/c\+\+/[0-9.]+/debug/`)

// glibcxxAssert classifies the _GLIBCXX_ASSERTIONS failure whose
// __glibcxx_assert_fail frame is frame i; its caller set up the arguments
// (file in %rdi, line in %esi, function in %rdx, condition in %rcx) as
// constants right before the call.
func (a *Reader) glibcxxAssert(i int) {
	a.cls.Kind = model.KindAssertion
	a.evidence("the stack goes through %s: a _GLIBCXX_ASSERTIONS precondition of the C++ standard library failed", BaseName(a.frames[i].Function))
	cond, msg := a.glibcxxAssertText(i)
	if msg != "" {
		a.cls.Message = msg
		a.evidence("its arguments, set up as constants before the call: %q", msg)
	}
	if cond == "" {
		a.cls.Summary = fmt.Sprintf("A C++ standard library assertion (_GLIBCXX_ASSERTIONS) failed in %s; its message is on stderr.", a.where())
		return
	}
	a.cls.Summary = fmt.Sprintf("Assertion `%s` failed in %s%s: a _GLIBCXX_ASSERTIONS precondition of the C++ standard library; the caller passed what the function does not accept (an index past the end, an empty container).", cond, a.libraryCallee(), a.where())
}

// glibcxxAssertText reads __glibcxx_assert_fail's arguments at frame i's
// call site: the condition and the message libstdc++ prints.
func (a *Reader) glibcxxAssertText(i int) (cond, msg string) {
	if i+1 >= len(a.frames) || a.p == nil || !a.x86() {
		return "", ""
	}
	args := a.callArguments(a.frames[i+1].Addr)
	cond, ok1 := a.readCString(args["rcx"], 1024)
	file, ok2 := a.readCString(args["rdi"], 1024)
	function, _ := a.readCString(args["rdx"], 4096)
	if !ok1 || args["rcx"] == 0 {
		return "", ""
	}
	if !ok2 || args["rdi"] == 0 {
		return cond, fmt.Sprintf("Assertion '%s' failed.", cond)
	}
	return cond, fmt.Sprintf("%s:%d: %s: Assertion '%s' failed.", file, args["rsi"], function, cond)
}

// callArguments reads the code before a call's return address ret and
// returns the registers it set to constants (disasm.CallArguments).
func (a *Reader) callArguments(ret uint64) map[string]uint64 {
	code := make([]byte, 64)
	if ret < uint64(len(code)) {
		return nil
	}
	if n, _ := a.p.ReadMemory(ret-uint64(len(code)), code); n < len(code) {
		return nil
	}
	return disasm.CallArguments(code, ret)
}

// The _Error_formatter of gcc 12's libstdc++ (debug/formatter.h) is a
// static object, _Error_formatter::_S_at()'s __formatter:
//
//	const char* _M_file; unsigned int _M_line;
//	_Parameter _M_parameters[9];   // 56 bytes each: kind, then name and value
//	unsigned int _M_num_parameters; const char* _M_text; const char* _M_function;
const (
	efParams    = 0x10
	efParamSize = 56
	efMaxParams = 9
	efNum       = 0x208
	efText      = 0x210
	efFunction  = 0x218
	efSize      = 0x220
	// _Parameter kinds (formatter.h): __integer and __string carry a value.
	efInteger = 3
	efString  = 4
)

// errorFormatterSymbol is _S_at's static __formatter.
const errorFormatterSymbol = "_ZZN11__gnu_debug16_Error_formatter5_S_atEPKcjS2_E11__formatter"

// debugModeCheck classifies a failed _GLIBCXX_DEBUG check, with the
// message its _Error_formatter holds.
func (a *Reader) debugModeCheck() {
	a.cls.Kind = model.KindAssertion
	a.evidence("the stack goes through libstdc++'s debug mode (_GLIBCXX_DEBUG): a safe container or iterator check failed")
	msg := a.errorFormatterText()
	if msg == "" {
		a.cls.Summary = fmt.Sprintf("A C++ standard library debug-mode check (_GLIBCXX_DEBUG) failed in %s; its message is on stderr.", a.where())
		return
	}
	a.cls.Message = msg
	a.evidence("the message, from libstdc++'s _Error_formatter: %q", msg)
	a.cls.Summary = fmt.Sprintf("A C++ standard library debug-mode check (_GLIBCXX_DEBUG) failed in %s%s: %s.", a.libraryCallee(), a.where(), strings.TrimSuffix(msg, "."))
}

// libraryCallee names the standard-library function the culprit called
// where the crash is ("std::vector::operator[], called from "), "" when
// the crash point is the culprit.
func (a *Reader) libraryCallee() string {
	cp := a.crashPoint()
	if cp < 0 || cp == a.cls.CulpritFrame {
		return ""
	}
	return BaseName(a.frames[cp].Function) + ", called from "
}

// efPlaceholder is a parameter reference in an _Error_formatter message:
// "%2;" (its value) or "%1.name;" (one of its fields).
var efPlaceholder = lazyregexp.New(`%([1-9])(?:\.([a-z_]+))?;`)

// errorFormatterText renders the _Error_formatter's message with its
// integer and string parameters, "" when it cannot be read.
func (a *Reader) errorFormatterText() string {
	if a.p == nil {
		return ""
	}
	ef, ok := a.p.SymbolAddress(errorFormatterSymbol)
	if !ok {
		return ""
	}
	buf := make([]byte, efSize)
	if n, _ := a.p.ReadMemory(ef, buf); n < len(buf) {
		return ""
	}
	text, ok := a.readCString(Le64(buf[efText:]), 1024)
	num := int(uint32(Le64(buf[efNum:])))
	if !ok || text == "" || num > efMaxParams {
		return ""
	}
	out := efPlaceholder.ReplaceAllStringFunc(text, func(ph string) string {
		m := efPlaceholder.FindStringSubmatch(ph)
		k, _ := strconv.Atoi(m[1])
		if k > num {
			return "…"
		}
		return a.errorParameter(buf[efParams+(k-1)*efParamSize:], m[2])
	})
	return strings.TrimSpace(out)
}

// errorParameter renders one _Parameter: its value for an integer or a
// string, its name for a field reference or another kind.
func (a *Reader) errorParameter(p []byte, field string) string {
	kind, name := uint32(Le64(p)), Le64(p[8:])
	if field == "" {
		switch kind {
		case efInteger:
			return strconv.FormatInt(int64(Le64(p[16:])), 10)
		case efString:
			if s, ok := a.readCString(Le64(p[16:]), 256); ok {
				return s
			}
		}
	}
	if s, ok := a.readCString(name, 256); ok && (field == "" || field == "name") {
		return s
	}
	return "…"
}
