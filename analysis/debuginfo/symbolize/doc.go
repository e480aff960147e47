// Package symbolize turns a module's link-time addresses into the frames
// gdb's `bt` prints: function names (qualified and demangled as gdb does),
// file names (gdb's default `filename-display relative`), lines, columns and
// every inlined level, from DWARF where a unit covers the pc and the symbol
// tables elsewhere. It also answers the questions gdb asks to find tail-call
// frames (call sites, tail calls, function entries) and searches them across
// the modules of an address space, and reads a frame's variables.
//
// It is the top layer of analysis/debuginfo: it combines object, elfsym,
// dwarfline, dwarfreader and variables, and none of them imports it
// (internal/archtest).
package symbolize
