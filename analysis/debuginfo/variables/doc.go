// Package variables evaluates a frame's arguments and locals from DWARF:
// location lists (.debug_loc, .debug_loclists), DWARF expressions (through
// analysis/unwind/op), the variables in scope at a pc, and their values
// formatted from their types as gdb prints them.
//
// It reads DWARF through dwarfreader and never imports symbolize
// (internal/archtest).
package variables
