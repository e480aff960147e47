// Package dwarfform holds DWARF attribute form codes (DWARF 5 §7.5.6, Table
// 7.6, and the GNU extensions gcc's include/dwarf2.def names) and reads the
// strings that DW_FORM_strp and DW_FORM_line_strp point into.
//
// It imports no other package of analysis/debuginfo (internal/archtest).
package dwarfform
