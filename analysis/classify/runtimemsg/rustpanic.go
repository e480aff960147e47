package runtimemsg

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// A Rust program built with panic=abort ends a panic in
// core::panicking::panic_fmt → std::panicking::begin_panic_handler →
// rust_panic_with_hook → panic_abort::__rust_start_panic → abort(). The
// panic's message and location are still in the frames' stack memory: the
// PanicInfo begin_panic_handler gets points at a core::fmt::Arguments
// { pieces: &[&str], fmt: Option<&[Argument]>, args: &[ArgumentV1] } and
// a core::panic::Location { file: &str, line: u32, col: u32 } (Rust 1.63's
// layouts, library/core/src/fmt/mod.rs and panic/location.rs).

// rustPanicFunctions are the panic machinery's functions (std, core and
// the panic runtimes), by base name.
var rustPanicFunctions = map[string]bool{
	"std::panicking::rust_panic_with_hook": true, "std::panicking::begin_panic_handler": true, "rust_begin_unwind": true,
	"core::panicking::panic_fmt": true, "core::panicking::panic": true, "core::panicking::panic_bounds_check": true,
	"core::panicking::panic_display": true, "core::panicking::panic_str": true, "core::panicking::assert_failed": true,
	"core::panicking::assert_failed_inner": true, "core::result::unwrap_failed": true, "core::option::expect_failed": true,
	"std::panicking::begin_panic": true, "std::panicking::rust_panic": true, "rust_panic": true,
	"panic_abort::__rust_start_panic": true, "__rust_start_panic": true, "core::panicking::panic_nounwind": true,
}

// rustRuntimePrefixes are std's and the panic runtimes' machinery: never
// the culprit, never the crash point.
var rustRuntimePrefixes = []string{"std::panicking::", "core::panicking::", "panic_abort::", "panic_unwind::",
	"std::sys_common::backtrace::", "std::rt::", "rust_begin_unwind", "rust_panic", "__rust_start_panic",
	"__rust_end_short_backtrace", "_rust_end_short_backtrace", "__rust_begin_short_backtrace", "_rust_begin_short_backtrace"}

// IsRustRuntime reports whether fn (a base name) is Rust's panic or
// start-up machinery.
func IsRustRuntime(fn string) bool {
	for _, p := range rustRuntimePrefixes {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// RustLibraryFile matches the Rust standard library's sources as its
// DWARF names them: relative to the rustc source tree ("library/core/src/
// result.rs"), or under it once monomorphised into the program
// ("/usr/src/rustc-1.63.0/library/...", rustup's "/rustc/HASH/library/...").
var RustLibraryFile = lazyregexp.New(`^(?:/usr/src/rustc-[^/]+/|/rustc/[0-9a-f]+/)?library/(?:core|std|alloc|panic_abort|panic_unwind|proc_macro|test)/src/`)

// RustPanic classifies a Rust panic that aborted (panic=abort), reading
// its message and location from memory, and reports whether the stack is
// one.
func (a *Reader) RustPanic() bool {
	k := -1
	for i, f := range a.frames[a.start:] {
		if rustPanicFunctions[BaseName(f.Function)] {
			k = a.start + i
			break
		}
	}
	if k < 0 {
		return false
	}
	a.cls.Kind = model.KindPanic
	a.evidence("the stack goes through %s: a Rust panic, which panic=abort ends with abort()", BaseName(a.frames[k].Function))
	msg, loc := a.rustPanicText()
	if msg != "" {
		a.cls.Message = msg
		a.evidence("the panic's message, from its core::fmt::Arguments in stack memory: %q", msg)
	}
	if loc != "" {
		a.evidence("the panic's location (core::panic::Location): %s", loc)
	}
	switch {
	case msg != "" && loc != "":
		a.cls.Summary = fmt.Sprintf("Rust panic in %s: %s (panicked at %s).", a.where(), msg, loc)
	case msg != "":
		a.cls.Summary = fmt.Sprintf("Rust panic in %s: %s.", a.where(), msg)
	default:
		a.cls.Summary = fmt.Sprintf("Rust panic in %s; its message is on stderr (\"thread '…' panicked at …\").", a.where())
	}
	return true
}

// SymbolNamer is implemented by a Process that can name the function at a
// code address by its symbol: a Rust trait implementation's, where DWARF's
// name ("{impl#5}::fmt") does not say which trait for which type.
type SymbolNamer interface {
	SymbolName(addr uint64) string
}

// Locator is implemented by a Process that can symbolize a code address
// (a formatting function a panic's arguments point at).
type Locator interface {
	Locate(addr uint64) []model.Frame
}

// rustPanicText finds the panic's Arguments and Location in the stack
// memory of the crashing thread's frames and renders them.
func (a *Reader) rustPanicText() (msg, loc string) {
	if a.p == nil || len(a.frames) == 0 || a.frames[0].Regs == nil {
		return "", ""
	}
	buf := make([]byte, asanScan)
	n := a.readAvailable(a.frames[0].Regs["rsp"], buf)
	for off := 0; off+8 <= n && (msg == "" || loc == ""); off += 8 {
		p := Le64(buf[off:])
		if p < NullLimit || !Canonical(p) {
			continue
		}
		if loc == "" {
			loc = a.rustLocation(p)
		}
		if msg == "" {
			msg = a.rustArguments(p)
		}
	}
	return msg, loc
}

// rustLocation renders the core::panic::Location at p as "src/main.rs:18:22",
// "" when p does not point at one.
func (a *Reader) rustLocation(p uint64) string {
	var b [24]byte
	if n, _ := a.p.ReadMemory(p, b[:]); n < len(b) {
		return ""
	}
	file, ok := a.rustStr(Le64(b[0:]), Le64(b[8:]))
	line, col := uint32(Le64(b[16:])), uint32(Le64(b[16:])>>32)
	if !ok || !strings.HasSuffix(file, ".rs") || line == 0 || line > 10_000_000 || col == 0 || col > 100_000 {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}

// rustStr reads the &str (ptr, len): printable UTF-8 of at most 4 KiB.
func (a *Reader) rustStr(ptr, n uint64) (string, bool) {
	if ptr < NullLimit || n > 4096 {
		return "", false
	}
	b := make([]byte, n)
	if k, _ := a.p.ReadMemory(ptr, b); uint64(k) < n {
		return "", false
	}
	s := string(b)
	if !utf8.ValidString(s) {
		return "", false
	}
	for _, r := range s {
		if r < ' ' && r != '\n' && r != '\t' {
			return "", false
		}
	}
	return s, true
}

// maxPanicPieces bounds the pieces and arguments of a panic message read.
const maxPanicPieces = 32

// rustArguments renders the core::fmt::Arguments at p (pieces and
// arguments interleaved, as Display without format specs does), "" when
// p does not point at one.
func (a *Reader) rustArguments(p uint64) string {
	var h [48]byte
	if n, _ := a.p.ReadMemory(p, h[:]); n < len(h) {
		return ""
	}
	pieces, npieces := Le64(h[0:]), Le64(h[8:])
	specs, args, nargs := Le64(h[16:]), Le64(h[32:]), Le64(h[40:])
	if npieces == 0 || npieces > maxPanicPieces || nargs > maxPanicPieces || specs != 0 || npieces < nargs || npieces > nargs+1 {
		return ""
	}
	var out strings.Builder
	for i := uint64(0); i < npieces; i++ {
		var s [16]byte
		if n, _ := a.p.ReadMemory(pieces+16*i, s[:]); n < len(s) {
			return ""
		}
		piece, ok := a.rustStr(Le64(s[0:]), Le64(s[8:]))
		if !ok {
			return ""
		}
		out.WriteString(piece)
		if i < nargs {
			out.WriteString(a.rustArgument(args + 16*i))
		}
	}
	if out.Len() == 0 {
		return ""
	}
	return out.String()
}

// rustIntFormatter matches the Display impls of the integer types, as the
// symbol table's demangled name and DWARF name them.
var rustIntFormatter = lazyregexp.New(`Display for (u8|u16|u32|u64|usize|i8|i16|i32|i64|isize)>::fmt|::fmt<(u8|u16|u32|u64|usize|i8|i16|i32|i64|isize)>$`)

// rustArgument renders one ArgumentV1 { value: &T, formatter: fn }: an
// integer or a &str by its formatter, "…" for anything else.
func (a *Reader) rustArgument(p uint64) string {
	var b [16]byte
	if n, _ := a.p.ReadMemory(p, b[:]); n < len(b) {
		return "…"
	}
	value, formatter := Le64(b[0:]), Le64(b[8:])
	name := ""
	if sn, ok := a.p.(SymbolNamer); ok {
		name = sn.SymbolName(formatter) // DWARF names the impl {impl#N}
	}
	if l, ok := a.p.(Locator); ok && name == "" {
		if fr := l.Locate(formatter); len(fr) > 0 {
			name = fr[len(fr)-1].Function
		}
	}
	if m := rustIntFormatter.FindStringSubmatch(name); m != nil {
		typ := m[1] + m[2]
		if v, ok := a.rustInt(value, typ); ok {
			return v
		}
	}
	if strings.Contains(name, "Display") || strings.HasSuffix(name, "::fmt<str>") || strings.HasSuffix(name, "::fmt<&str>") {
		var s [16]byte
		if n, _ := a.p.ReadMemory(value, s[:]); n == len(s) {
			if str, ok := a.rustStr(Le64(s[0:]), Le64(s[8:])); ok {
				return str
			}
		}
	}
	return "…"
}

// rustInt reads an integer of Rust type typ at p as decimal.
func (a *Reader) rustInt(p uint64, typ string) (string, bool) {
	size := map[string]int{"u8": 1, "i8": 1, "u16": 2, "i16": 2, "u32": 4, "i32": 4}[typ]
	if size == 0 {
		size = 8
	}
	var b [8]byte
	if n, _ := a.p.ReadMemory(p, b[:size]); n < size {
		return "", false
	}
	v := Le64(b[:])
	if typ[0] == 'i' {
		shift := 64 - 8*uint(size)
		return strconv.FormatInt(int64(v<<shift)>>shift, 10), true
	}
	return strconv.FormatUint(v, 10), true
}
