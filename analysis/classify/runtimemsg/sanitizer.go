package runtimemsg

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// sanitizerPrefixes name the sanitizer runtimes' code, which clang links
// into the executable (no module tells it apart): ASan, UBSan, TSan, MSan,
// LSan, HWASan and their interceptors.
var sanitizerPrefixes = []string{"__asan::", "__asan_", "__sanitizer::", "__sanitizer_", "__ubsan::", "__ubsan_",
	"__tsan::", "__tsan_", "__msan::", "__msan_", "__lsan::", "__lsan_", "__hwasan::", "__hwasan_",
	"__interceptor_", "___interceptor_", "__interception::", "__cxxabiv1::__ubsan"}

// sanitizerEntries are the sanitizer runtimes' entry points that
// instrumented code calls when a check fails: the program's frame is the
// one below.
var sanitizerEntries = lazyregexp.New(`^(?:__ubsan::)?__ubsan_handle_|^(?:__asan::)?__asan_report_|^__msan_warning|^(?:__hwasan::)?__hwasan_report_`)

// SanitizerEntry is the index of the first frame of a sanitizer's entry
// point among the top frames, -1 when there is none.
func (a *Reader) SanitizerEntry() int {
	for i := a.start; i < len(a.frames) && i < a.start+32; i++ {
		if sanitizerEntries.MatchString(BaseName(a.frames[i].Function)) {
			return i
		}
	}
	return -1
}

// IsSanitizerRuntime reports whether fn (a base name) is sanitizer runtime code.
func IsSanitizerRuntime(fn string) bool {
	for _, p := range sanitizerPrefixes {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// asanCheck is ASan's failed-check entry point the instrumented code
// calls: __asan_report_load8, __asan_report_exp_store_n, ... (gcc's
// libasan's DWARF names them inside namespace __asan).
var asanCheck = lazyregexp.New(`^(?:__asan::)?__(?:asan|hwasan)_report_(?:exp_)?(load|store)(\d+|_n)(?:_noabort)?$`)

// asanReportFunctions are the runtime's report paths for errors found in
// interceptors and the allocator (double free, memcpy overlap, ...).
var asanReportFunctions = map[string]bool{"__asan::ReportGenericError": true, "__asan::ReportDoubleFree": true,
	"__asan::ReportFreeNotMalloced": true, "__asan::ReportStringFunctionMemoryRangesOverlap": true,
	"__asan::ReportMallocUsableSizeNotOwned": true, "__asan::ReportAllocTypeMismatch": true,
	"__asan::ReportNewDeleteTypeMismatch": true, "__asan::ReportOutOfMemory": true,
	"__sanitizer::Die": true, "__asan::ScopedInErrorReport::~ScopedInErrorReport": true}

// SanitizerKind classifies a crash a sanitizer stopped, from its report
// when the log was given, else from the runtime's frames on the stack and
// what its report path left in memory. It reports false when no sanitizer
// was involved.
func (a *Reader) SanitizerKind() bool {
	if s := a.c.Sanitizer; s != nil {
		a.sanitizerLog(s)
		return true
	}
	switch {
	case a.undefinedBehavior():
	case a.threadSanitizer():
	case a.memorySanitizer():
	case a.leakSanitizer():
	default:
		return a.addressSanitizer()
	}
	return true
}

// addressSanitizer classifies an ASan abort from the core: the report
// ASan was writing is still in its frames' stack memory (asanreport.go).
func (a *Reader) addressSanitizer() bool {
	access, size, check := a.asanCheckFrame()
	inRuntime := check
	if !inRuntime {
		_, inRuntime = a.hasFrame(asanReportFunctions)
	}
	if !inRuntime {
		return false
	}
	if check {
		a.evidence("the stack goes through __asan_report_%s%d: AddressSanitizer's check of %s %d-byte %s failed there", map[string]string{"read": "load", "write": "store"}[access], size, article(size), size, access)
	}
	if r, ok := a.asanReportInMemory(); ok {
		a.asanFromMemory(r, access, size, check)
		return true
	}
	a.cls.Kind = model.KindMemoryError
	what := "an invalid memory access or allocator misuse"
	if check {
		what = fmt.Sprintf("an invalid %d-byte %s", size, access)
	}
	a.cls.Summary = fmt.Sprintf("AddressSanitizer stopped the program: %s in %s. Its report (the program's stderr) names the bug type and the allocation and free stacks: give it with the core (`faultline analyze CORE asan.log`).", what, a.where())
	return true
}

// sanitizerLog classifies from the sanitizer's own report (its log given
// with the core).
func (a *Reader) sanitizerLog(s *model.SanitizerReport) {
	access, size, check := a.asanCheckFrame()
	if check {
		a.evidence("the stack goes through __asan_report_%s%d: AddressSanitizer's check of %s %d-byte %s failed there", map[string]string{"read": "load", "write": "store"}[access], size, article(size), size, access)
	}
	a.cls.Kind = sanitizerBugKind(s)
	a.evidence("%s's report (%s): %s%s", s.Tool, s.Log, s.Bug, addressSuffix(s.Address))
	if s.Access == "" && check {
		s.Access, s.Size = access, size
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s — ", s.Tool, s.Bug)
	if s.Access != "" {
		fmt.Fprintf(&b, "%s %d-byte %s in %s", article(s.Size), s.Size, s.Access, a.where())
	} else {
		fmt.Fprintf(&b, "in %s", a.where())
	}
	if s.FreedAt != "" {
		fmt.Fprintf(&b, " of memory freed in %s", s.FreedAt)
		a.evidence("freed by %s", s.FreedAt)
	}
	if s.AllocatedAt != "" {
		fmt.Fprintf(&b, ", allocated in %s", s.AllocatedAt)
		a.evidence("allocated by %s", s.AllocatedAt)
	}
	b.WriteString(".")
	a.cls.Summary = b.String()
}

// asanCheckFrame finds __asan_report_<load|store><N> on the stack.
func (a *Reader) asanCheckFrame() (access string, size int, ok bool) {
	for _, f := range a.frames[a.start:] {
		m := asanCheck.FindStringSubmatch(BaseName(f.Function))
		if m == nil {
			continue
		}
		access = "read"
		if m[1] == "store" {
			access = "write"
		}
		size, _ = strconv.Atoi(m[2])
		return access, size, true
	}
	return "", 0, false
}

// sanitizerBugKind maps ASan's bug types onto crash kinds.
func sanitizerBugKind(s *model.SanitizerReport) string {
	bug := s.Bug
	switch {
	case strings.Contains(bug, "use-after-free"), strings.Contains(bug, "use-after-return"),
		strings.Contains(bug, "use-after-scope"), strings.Contains(bug, "use-after-poison"):
		return model.KindUseAfterFree
	case strings.Contains(bug, "overflow") && bug != "stack-overflow", strings.Contains(bug, "underflow"):
		return model.KindBufferOverflow
	case bug == "stack-overflow":
		return model.KindStackOverflow
	case strings.Contains(bug, "memory leaks"):
		return model.KindMemoryLeak
	case strings.Contains(bug, "double-free"), strings.Contains(bug, "free on address"),
		strings.Contains(bug, "alloc-dealloc-mismatch"), strings.Contains(bug, "new-delete-type-mismatch"),
		strings.Contains(bug, "bad-free"):
		return model.KindHeapCorruption
	case bug == "SEGV":
		if v, ok := ParseHex(s.Address); ok && v < NullLimit {
			return model.KindNullDeref
		}
		return model.KindWildPointer
	}
	return model.KindMemoryError
}

func addressSuffix(addr string) string {
	if addr == "" {
		return ""
	}
	return " on address " + addr
}
