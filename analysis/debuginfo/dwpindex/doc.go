// Package dwpindex reads the unit index of a DWARF package file (.dwp):
// .debug_cu_index and .debug_tu_index (DWARF 5 §7.3.5, and the GNU version 2
// format), which give each split unit's contribution to every section.
//
// It imports only analysis/debuginfo/object (internal/archtest).
package dwpindex
