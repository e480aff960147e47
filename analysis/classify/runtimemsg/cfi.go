package runtimemsg

import (
	"fmt"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// clang's sanitizer checks, in its SanitizerHandler order
// (clang/lib/CodeGen/SanitizerHandler.h, LIST_SANITIZER_CHECKS): in trap
// mode (-fsanitize-trap, the default of -fsanitize=cfi) a failed check is
// `ud1 ID(%eax),%eax` (llvm.ubsantrap), ID its index here.
var clangSanitizerChecks = []string{"add_overflow", "builtin_unreachable", "cfi_check_fail", "divrem_overflow",
	"dynamic_type_cache_miss", "float_cast_overflow", "function_type_mismatch", "implicit_conversion", "invalid_builtin",
	"invalid_objc_cast", "load_invalid_value", "missing_return", "mul_overflow", "negate_overflow", "nullability_arg",
	"nullability_return", "nonnull_arg", "nonnull_return", "out_of_bounds", "pointer_overflow", "shift_out_of_bounds",
	"sub_overflow", "type_mismatch", "alignment_assumption", "vla_bound_not_positive"}

// ubsanTrapID decodes `ud1 ID(%eax),%eax` (67 0f b9 /r, the ID its
// displacement); ok is false for any other instruction.
func ubsanTrapID(code []byte) (int, bool) {
	if len(code) > 0 && code[0] == 0x67 {
		code = code[1:]
	}
	if len(code) < 3 || code[0] != 0x0f || code[1] != 0xb9 || code[2]&7 != 0 {
		return 0, false
	}
	switch code[2] >> 6 {
	case 0:
		return 0, true
	case 1:
		if len(code) >= 4 {
			return int(code[3]), true
		}
	case 2:
		if len(code) >= 7 {
			return int(code[3]), true
		}
	}
	return 0, false
}

// SanitizerTrap classifies a sanitizer check compiled as a trap and
// reports whether code (at the pc) is one: a CFI check is a
// cfi-violation, any other an undefined-behavior check.
func (a *Reader) SanitizerTrap(code []byte) bool {
	id, ok := ubsanTrapID(code)
	if !ok || id >= len(clangSanitizerChecks) {
		return false
	}
	check := clangSanitizerChecks[id]
	a.evidence("`ud1 %#x(%%eax),%%eax` is the trap clang compiles a failed sanitizer check into (-fsanitize-trap): check %d, %s", id, id, check)
	if check == "cfi_check_fail" {
		a.cls.Kind = model.KindCFIViolation
		a.cls.Summary = fmt.Sprintf("Control-flow integrity check failed in %s (-fsanitize=cfi): an indirect call or cast through a pointer whose target's type is not the one the code expects; the trap records no type, rebuild with -fno-sanitize-trap=cfi for the runtime to name it.", a.where())
		return true
	}
	a.cls.Kind = model.KindUndefinedBehavior
	a.cls.Summary = fmt.Sprintf("UndefinedBehaviorSanitizer trap (-fsanitize-trap): %s in %s.", OrDefault(ubsanChecks[check], check), a.where())
	return true
}

// CFI's check kinds (compiler-rt ubsan_handlers.h CFITypeCheckKind), as
// sentences about the expected type %s.
var cfiCheckKinds = []string{"a virtual call on an object that is not a %s",
	"a non-virtual member call on an object that is not a %s", "a cast to a derived type of an object that is not a %s",
	"a cast to an unrelated type of an object that is not a %s",
	"an indirect call through a pointer to a function that is not of type %s",
	"a non-virtual member function call through a pointer that is not of type %s",
	"a virtual member function call through a pointer that is not of type %s"}

// cfiFromHandler classifies a control-flow-integrity failure that
// UBSan's runtime reported (-fno-sanitize-trap=cfi): the handler
// __ubsan_handle_cfi_check_fail on the stack as frame i. Its caller passed
// the CFICheckFailData { u8 CheckKind; SourceLocation Loc; const
// TypeDescriptor &Type; } in %rdi, a constant set up before the call.
func (a *Reader) cfiFromHandler(i int) {
	a.cls.Kind = model.KindCFIViolation
	a.evidence("the stack goes through %s: a control-flow-integrity check (-fsanitize=cfi) failed and its runtime aborted", BaseName(a.frames[i].Function))
	what, typ := a.cfiCheckData(i)
	if typ == "" {
		a.cls.Summary = fmt.Sprintf("Control-flow integrity check failed in %s: an indirect call or cast through a pointer whose target's type is not the one the code expects; the runtime's report on stderr names it.", a.where())
		return
	}
	a.evidence("the check's data (CFICheckFailData, passed to the handler in %%rdi): check kind %q, expected type %s", what, typ)
	a.cls.Summary = fmt.Sprintf("Control-flow integrity check failed in %s: %s (a cast between unrelated types, or a stale or corrupted pointer).", a.where(), fmt.Sprintf(what, typ))
}

// cfiCheckData reads the check kind and the expected type's name from the
// CFICheckFailData the handler at frame i was called with.
func (a *Reader) cfiCheckData(i int) (what, typ string) {
	if i+1 >= len(a.frames) || a.p == nil || !a.x86() {
		return "", ""
	}
	data := a.callArguments(a.frames[i+1].Addr)["rdi"]
	var b [32]byte
	if data == 0 {
		return "", ""
	}
	if n, _ := a.p.ReadMemory(data, b[:]); n < len(b) {
		return "", ""
	}
	kind := int(b[0])
	desc := Le64(b[24:])
	// TypeDescriptor { u16 TypeKind; u16 TypeInfo; char TypeName[]; }
	name, ok := a.readCString(desc+4, 512)
	if !ok || kind >= len(cfiCheckKinds) || !strings.HasPrefix(name, "'") {
		return "", ""
	}
	return cfiCheckKinds[kind], name
}
