// Package rustdemangle demangles Rust symbol names, in the legacy scheme
// (_ZN…17h<hash>E, Itanium-shaped) and in the v0 scheme (_R…, RFC 2603),
// as libiberty's rust-demangle prints them: gdb's names for minimal
// symbols (Verbose off: no hashes, no crate disambiguators) and c++filt's
// (Verbose on). Its tests compare it with binutils' c++filt on the
// symbols of programs built here with Debian's rustc, and with libiberty's
// own test vectors.
//
// The input is untrusted (a symbol table or DWARF of any file): the
// recursion is bounded, back-references may only point backwards, and the
// output is capped, so a small name cannot make an exponential one.
package rustdemangle

import "strings"

// Options say how names are printed.
type Options struct {
	// Verbose prints a legacy name's hash and v0 crate disambiguators and
	// integer constants' types, as c++filt does; gdb prints neither.
	Verbose bool
}

// maxOutput bounds a demangled name: v0 back-references can nest, and a
// name that would print longer than this is left mangled.
const maxOutput = 64 << 10

// maxDepth bounds the nesting of paths, types and back-references, and
// maxSteps the paths, types and constants read in all.
const (
	maxDepth = 256
	maxSteps = 1 << 16
)

// Demangle returns the demangled form of a Rust symbol and true, or the
// symbol and false when it is not a well-formed Rust name. A suffix the
// compiler or linker appended (".llvm.1234", "@@VERS") is dropped.
func Demangle(sym string, o Options) (string, bool) {
	switch {
	case strings.HasPrefix(sym, "_ZN"):
		return legacy(sym, o)
	case strings.HasPrefix(sym, "_R"):
		return v0(sym, o)
	}
	return sym, false
}

// output is a demangled name being written; once it would pass maxOutput
// it stops growing and records the overflow.
type output struct {
	b        strings.Builder
	overflow bool
}

func (w *output) str(s string) {
	if w.overflow {
		return
	}
	if w.b.Len()+len(s) > maxOutput {
		w.overflow = true
		return
	}
	w.b.WriteString(s)
}

func (w *output) byte(c byte) { w.str(string(c)) }
