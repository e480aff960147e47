package native

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/model"
)

// SymbolAddress returns the run-time address of a global symbol, looked up
// in every module's symbol tables (link-time address plus the module's load
// bias). libc is searched first, so that glibc's own variables
// (__abort_msg) win over a program's symbol of the same name.
func (p *Process) SymbolAddress(name string) (uint64, bool) {
	mods := append([]*module(nil), p.modules...)
	sort.SliceStable(mods, func(i, j int) bool { return isLibc(mods[i].path) && !isLibc(mods[j].path) })
	for _, m := range mods {
		s := m.symbols()
		if s == nil {
			continue
		}
		if a, ok := s.SymbolAddr(name); ok && a != 0 {
			return a + m.bias, true
		}
	}
	return 0, false
}

func isLibc(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, "libc.so") || strings.HasPrefix(base, "libc-")
}

// ThreadRegisters returns the registers the core recorded for thread lwp
// (NT_PRSTATUS), by gdb's names.
func (p *Process) ThreadRegisters(lwp int) (map[string]uint64, bool) {
	for _, t := range p.core.Threads {
		if t.LWP != lwp {
			continue
		}
		named, _, ok := threadRegs(&t)
		return named, ok
	}
	return nil, false
}

// dataSymbol is one object symbol of a module, at its run-time address.
type dataSymbol struct {
	name       string
	addr, size uint64
}

// DataSymbols names the object symbols (STT_OBJECT, e.g. a global mutex)
// containing each address, "name" or "name+0x10", "" where none does. Each
// module's ELF symbol tables are read once per call.
func (p *Process) DataSymbols(addrs []uint64) []string {
	out := make([]string, len(addrs))
	tables := map[*module][]dataSymbol{}
	for i, addr := range addrs {
		m := p.moduleAt(addr)
		if m == nil || m.obj == nil {
			continue
		}
		syms, ok := tables[m]
		if !ok {
			syms = m.dataSymbols()
			tables[m] = syms
		}
		j := sort.Search(len(syms), func(j int) bool { return syms[j].addr > addr }) - 1
		if j < 0 || addr-syms[j].addr >= max(syms[j].size, 1) {
			continue
		}
		out[i] = syms[j].name
		if off := addr - syms[j].addr; off != 0 {
			out[i] += fmt.Sprintf("+%#x", off)
		}
	}
	return out
}

// dataSymbols reads a module's object symbols, sorted by run-time address.
func (m *module) dataSymbols() []dataSymbol {
	var out []dataSymbol
	seen := map[uint64]bool{}
	for _, o := range []*object.Object{m.obj, m.dbg} {
		if o == nil {
			continue
		}
		f := o.ELF()
		for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
			syms, _ := read()
			for _, s := range syms {
				if elf.ST_TYPE(s.Info) != elf.STT_OBJECT || s.Value == 0 || s.Name == "" || seen[s.Value] {
					continue
				}
				seen[s.Value] = true
				out = append(out, dataSymbol{name: s.Name, addr: s.Value + m.bias, size: s.Size})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].addr < out[j].addr })
	return out
}

// Locate symbolizes a code address of the crashed process: the inline
// chain at addr, innermost first (an instruction address, not a return
// address); nil for an address no module covers.
func (p *Process) Locate(addr uint64) []model.Frame {
	if p.moduleAt(addr) == nil {
		return nil
	}
	return newSymbolizer(p).lookup(addr, false)
}

// SymbolName names the function at a code address by its symbol, as gdb's
// `info symbol` does, demangled without parameters (Rust without its hash):
// "core::fmt::num::imp::<impl core::fmt::Display for u32>::fmt", where
// the frame's name, from DWARF, is core::fmt::num::imp::{impl#5}::fmt.
func (p *Process) SymbolName(addr uint64) string {
	m := p.moduleAt(addr)
	if m == nil || m.symbols() == nil {
		return ""
	}
	return m.symbols().SymbolName(addr - m.bias)
}
