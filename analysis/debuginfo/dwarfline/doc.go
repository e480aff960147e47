// Package dwarfline decodes DWARF line number programs (DWARF 2-5, §6.2)
// into line tables and answers "which file, line and column is this pc" as
// gdb does (subfiles, is_stmt, gdb's path joining), and as LLVM's reader
// does for llvm-symbolizer parity.
//
// It imports only analysis/debuginfo/object and dwarfform (internal/archtest).
package dwarfline
