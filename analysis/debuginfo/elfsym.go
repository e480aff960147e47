package debuginfo

import (
	"bytes"
	"debug/elf"
	"sort"
)

// maxSymbols caps the number of symbols read from one symbol table.
const maxSymbols = 1 << 24

// elfSymbol is one function-like symbol of .symtab or .dynsym.
type elfSymbol struct {
	name  string
	addr  uint64
	size  uint64
	bind  elf.SymBind
	isFun bool
	shndx uint16
}

// symbolTable is a symbol table sorted by address for pc lookups.
type symbolTable struct {
	syms   []elfSymbol // code symbols sorted by address, preferred first at equal address
	byName map[string]uint64
	// sections bound zero-sized symbols to their own section.
	sections []*elf.Section
}

// inSection reports whether pc lies in the section of s.
func (t *symbolTable) inSection(s *elfSymbol, pc uint64) bool {
	if int(s.shndx) >= len(t.sections) {
		return false
	}
	sec := t.sections[s.shndx]
	return pc >= sec.Addr && pc-sec.Addr < sec.Size
}

// readSymbols parses the named symbol table section (System V ABI, "Symbol
// Table": Elf32_Sym / Elf64_Sym) straight from the mapping.
func readSymbols(o *Object, section string) *symbolTable {
	t := readSymbolsRaw(o, section)
	if t != nil {
		t.sections = o.elf.Sections
	}
	return t
}

func readSymbolsRaw(o *Object, section string) *symbolTable {
	if o == nil {
		return nil
	}
	s := o.elf.Section(section)
	if s == nil || (s.Type != elf.SHT_SYMTAB && s.Type != elf.SHT_DYNSYM) {
		return nil
	}
	data := o.rawSection(s)
	if data == nil || int(s.Link) >= len(o.elf.Sections) {
		return nil
	}
	strs := o.rawSection(o.elf.Sections[s.Link])
	bo := o.elf.ByteOrder
	entSize := 24
	if o.elf.Class == elf.ELFCLASS32 {
		entSize = 16
	}
	n := len(data) / entSize
	if n > maxSymbols {
		n = maxSymbols
	}
	t := &symbolTable{byName: map[string]uint64{}}
	for i := 1; i < n; i++ {
		e := data[i*entSize : (i+1)*entSize]
		var nameOff uint32
		var info uint8
		var shndx uint16
		var value, size uint64
		if entSize == 24 {
			nameOff, info, shndx = bo.Uint32(e[0:]), e[4], bo.Uint16(e[6:])
			value, size = bo.Uint64(e[8:]), bo.Uint64(e[16:])
		} else {
			nameOff = bo.Uint32(e[0:])
			value, size = uint64(bo.Uint32(e[4:])), uint64(bo.Uint32(e[8:]))
			info, shndx = e[12], bo.Uint16(e[14:])
		}
		if shndx == uint16(elf.SHN_UNDEF) || shndx >= uint16(elf.SHN_LORESERVE) {
			continue
		}
		name := cString(strs, nameOff)
		if name == "" {
			continue
		}
		typ := elf.ST_TYPE(info)
		bind := elf.ST_BIND(info)
		switch typ {
		case elf.STT_FUNC, elf.STT_GNU_IFUNC, elf.STT_OBJECT, elf.STT_TLS, elf.STT_NOTYPE:
		default:
			continue
		}
		if typ != elf.STT_TLS {
			if _, dup := t.byName[name]; !dup || bind == elf.STB_GLOBAL {
				t.byName[name] = value
			}
		}
		code := typ == elf.STT_FUNC || typ == elf.STT_GNU_IFUNC
		if typ == elf.STT_NOTYPE && int(shndx) < len(o.elf.Sections) &&
			o.elf.Sections[shndx].Flags&elf.SHF_EXECINSTR != 0 {
			code = true
		}
		if !code {
			continue
		}
		t.syms = append(t.syms, elfSymbol{name: name, addr: value, size: size, bind: bind, isFun: typ != elf.STT_NOTYPE, shndx: shndx})
	}
	// gdb sorts minimal symbols by address, then name, and drops exact
	// duplicates (minsyms.c compact_minimal_symbols).
	sort.Slice(t.syms, func(i, j int) bool {
		a, b := &t.syms[i], &t.syms[j]
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		return a.name < b.name
	})
	out := t.syms[:0]
	for i, sym := range t.syms {
		if i > 0 && sym.addr == t.syms[i-1].addr && sym.name == t.syms[i-1].name {
			continue
		}
		out = append(out, sym)
	}
	t.syms = out
	return t
}

func cString(b []byte, off uint32) string {
	if uint64(off) >= uint64(len(b)) {
		return ""
	}
	b = b[off:]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// maxSymbolScan bounds the backward scan over zero-sized symbols.
const maxSymbolScan = 4096

// lookup returns the symbol for pc as gdb's lookup_minimal_symbol_by_pc_section
// picks it: the last symbol (in address, then name order) at or below pc in
// pc's section, skipping back over zero-sized symbols to a sized one; a sized
// symbol that does not reach pc yields the nearest zero-sized one, or nothing.
func (t *symbolTable) lookup(pc uint64) *elfSymbol {
	if t == nil || len(t.syms) == 0 {
		return nil
	}
	hi := sort.Search(len(t.syms), func(i int) bool { return t.syms[i].addr > pc }) - 1
	zero := -1
	for n := 0; hi >= 0 && n < maxSymbolScan; n++ {
		s := &t.syms[hi]
		if !t.inSection(s, pc) {
			hi--
			continue
		}
		if s.size == 0 {
			if zero < 0 {
				zero = hi
			}
			hi--
			continue
		}
		break
	}
	if hi < 0 || t.syms[hi].size == 0 || !t.inSection(&t.syms[hi], pc) {
		if zero >= 0 {
			return &t.syms[zero]
		}
		return nil
	}
	if s := &t.syms[hi]; pc-s.addr >= s.size {
		if zero >= 0 {
			return &t.syms[zero]
		}
		return nil
	}
	return &t.syms[hi]
}
