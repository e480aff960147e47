// Package elfsym reads an object's ELF symbol tables (.symtab, .dynsym) the
// way gdb's minimal symbols see them: code symbols by address, names looked
// up through .gnu.hash or the SysV hash table without reading a table whole,
// synthetic name@plt symbols for PLT entries, and a persistent cache of the
// sorted tables (indexcache).
//
// It imports only analysis/debuginfo/object (internal/archtest).
package elfsym
