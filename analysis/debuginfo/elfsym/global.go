package elfsym

import (
	"debug/elf"
	"sort"
)

// IsGlobal reports whether the code symbol name at addr is global or weak.
func (t *SymbolTable) IsGlobal(name string, addr uint64) bool {
	i := sort.Search(len(t.Syms), func(i int) bool { return t.Syms[i].Addr >= addr })
	for ; i < len(t.Syms) && t.Syms[i].Addr == addr; i++ {
		if string(t.nameBytes(&t.Syms[i])) == name {
			return t.Syms[i].Bind != elf.STB_LOCAL
		}
	}
	return false
}
