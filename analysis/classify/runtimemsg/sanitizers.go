package runtimemsg

import (
	"fmt"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// The sanitizers other than ASan, told apart by the runtime function on
// the stack that stopped the program (compiler-rt's names, the same in
// gcc's libubsan and libtsan).

// ubsanHandler matches UBSan's handler for a failed check; with
// -fno-sanitize-recover its _abort variant ends the program.
var ubsanHandler = lazyregexp.New(`^(?:__ubsan::)?__ubsan_handle_([a-z_]+?)(?:_v1)?(?:_abort|_minimal_abort)?$`)

// ubsanChecks says what each UBSan check (handler name) found
// (compiler-rt ubsan_handlers.h).
var ubsanChecks = map[string]string{
	"add_overflow": "signed integer overflow in an addition", "sub_overflow": "signed integer overflow in a subtraction",
	"mul_overflow": "signed integer overflow in a multiplication", "negate_overflow": "signed integer overflow in a negation",
	"divrem_overflow":        "a division or remainder by zero, or INT_MIN / -1",
	"shift_out_of_bounds":    "a shift by a negative or too large amount, or of a negative value",
	"out_of_bounds":          "an array index out of bounds",
	"type_mismatch":          "a load or store through a NULL or misaligned pointer, or into too small an object",
	"load_invalid_value":     "a load of a value that is not valid for its type (a bool or an enum)",
	"builtin_unreachable":    "__builtin_unreachable() was reached",
	"missing_return":         "the end of a value-returning function was reached without a return",
	"vla_bound_not_positive": "a variable-length array with a bound that is not positive",
	"float_cast_overflow":    "a floating-point value out of the range of the integer type it was converted to",
	"nonnull_arg":            "NULL passed for a parameter declared nonnull", "nonnull_return": "NULL returned from a function declared returns_nonnull",
	"nullability_arg": "NULL passed for a _Nonnull parameter", "nullability_return": "NULL returned as _Nonnull",
	"pointer_overflow":        "pointer arithmetic that overflowed or wrapped",
	"function_type_mismatch":  "a call through a function pointer of the wrong type",
	"implicit_conversion":     "an implicit conversion that changed the value",
	"invalid_builtin":         "a builtin called with an invalid argument (__builtin_clz(0))",
	"alignment_assumption":    "a pointer that breaks an alignment assumption",
	"dynamic_type_cache_miss": "a member access or call on an object of the wrong dynamic type (vptr check)",
	"invalid_objc_cast":       "an invalid Objective-C cast",
}

// undefinedBehavior classifies an abort from UBSan's handlers.
func (a *Reader) undefinedBehavior() bool {
	for i := a.start; i < len(a.frames); i++ {
		f := a.frames[i]
		m := ubsanHandler.FindStringSubmatch(BaseName(f.Function))
		if m == nil {
			continue
		}
		check := m[1]
		if strings.HasPrefix(check, "cfi_") {
			a.cfiFromHandler(i)
			return true
		}
		what := ubsanChecks[check]
		if what == "" {
			what = strings.ReplaceAll(check, "_", " ")
		}
		a.cls.Kind = model.KindUndefinedBehavior
		a.evidence("the stack goes through %s: UndefinedBehaviorSanitizer's %s check failed, and -fno-sanitize-recover made it abort", BaseName(f.Function), check)
		a.cls.Summary = fmt.Sprintf("UndefinedBehaviorSanitizer: %s in %s; its report on stderr gives the operands.", what, a.where())
		return true
	}
	return false
}

// tsanReports are ThreadSanitizer's report functions and what they report
// (compiler-rt tsan_rtl_report.cpp, tsan_rtl_mutex.cpp).
var tsanReports = []struct{ fn, what string }{
	{"__tsan::ReportRace", "data race"},
	{"__tsan::ReportDeadlock", "lock-order inversion (potential deadlock)"},
	{"__tsan::ReportMutexMisuse", "mutex misuse"},
	{"__tsan::ReportDestroyLocked", "a mutex destroyed while locked"},
	{"__tsan::ReportSignalUnsafe", "a call of a function that is not async-signal-safe in a signal handler"},
	{"__tsan::ReportErrnoSpoiling", "errno spoiled by a signal handler"},
	{"__tsan::ThreadFinalize", "a thread leaked (never joined)"},
}

// threadSanitizer classifies an abort from ThreadSanitizer's report path.
func (a *Reader) threadSanitizer() bool {
	for _, f := range a.frames[a.start:] {
		fn := BaseName(f.Function)
		for _, r := range tsanReports {
			if fn != r.fn {
				continue
			}
			a.cls.Kind = model.KindDataRace
			a.evidence("the stack goes through %s: ThreadSanitizer reported a %s and (halt_on_error, abort_on_error) aborted", fn, r.what)
			if r.what != "data race" {
				a.cls.Summary = fmt.Sprintf("ThreadSanitizer: %s in %s; its report on stderr names the threads and locks.", r.what, a.where())
				return true
			}
			a.cls.Summary = fmt.Sprintf("ThreadSanitizer: data race in %s — another thread accessed the same memory without synchronisation; its report on stderr names the other thread's access and the memory's location.", a.where())
			return true
		}
	}
	return false
}

// memorySanitizer classifies an abort from MSan's warning.
func (a *Reader) memorySanitizer() bool {
	for _, f := range a.frames[a.start:] {
		fn := BaseName(f.Function)
		if !strings.HasPrefix(fn, "__msan_warning") && fn != "__msan::ReportUMR" && fn != "__msan::PrintWarningWithOrigin" {
			continue
		}
		a.cls.Kind = model.KindUninitialized
		a.evidence("the stack goes through %s: MemorySanitizer found a branch, index or call argument that depends on an uninitialised value", fn)
		a.cls.Summary = fmt.Sprintf("MemorySanitizer: use of an uninitialised value in %s; rebuild with -fsanitize-memory-track-origins=2 for where it was allocated.", a.where())
		return true
	}
	return false
}

// leakSanitizer classifies the abort of LeakSanitizer's check at exit:
// there is no culprit frame, the leaks' allocation stacks are in its
// report.
func (a *Reader) leakSanitizer() bool {
	for _, f := range a.frames[a.start:] {
		fn := BaseName(f.Function)
		if fn != "__lsan::DoLeakCheck" && fn != "__lsan::HandleLeaks" && fn != "__lsan::DoRecoverableLeakCheck" {
			continue
		}
		a.cls.Kind = model.KindMemoryLeak
		a.cls.CulpritFrame = -1
		a.evidence("the stack goes through %s: LeakSanitizer's check at exit found memory no pointer reaches any more", fn)
		a.cls.Summary = "LeakSanitizer: the program leaked memory (its check at exit found allocations no pointer reaches); its report on stderr gives each leak's allocation stack."
		return true
	}
	return false
}
