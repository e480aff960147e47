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
	sort.SliceStable(t.syms, func(i, j int) bool {
		a, b := &t.syms[i], &t.syms[j]
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		return symRank(a) < symRank(b)
	})
	return t
}

// symRank orders symbols at one address the way gdb's minimal symbol
// preference does in practice: sized functions, then global over weak over
// local.
func symRank(s *elfSymbol) int {
	r := 0
	if !s.isFun {
		r += 10
	}
	if s.size == 0 {
		r += 5
	}
	switch s.bind {
	case elf.STB_GLOBAL:
	case elf.STB_WEAK:
		r++
	default:
		r += 2
	}
	return r
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

// lookup returns the symbol covering pc: the last symbol at or below pc
// whose size covers pc (a zero-sized symbol covers up to the next symbol).
func (t *symbolTable) lookup(pc uint64) *elfSymbol {
	if t == nil || len(t.syms) == 0 {
		return nil
	}
	i := sort.Search(len(t.syms), func(i int) bool { return t.syms[i].addr > pc }) - 1
	// Walk back over symbols at lower addresses: a sized symbol further back
	// may still cover pc (nested or overlapping symbols).
	for j := i; j >= 0 && j > i-64; j-- {
		s := &t.syms[j]
		if s.size > 0 && pc-s.addr < s.size {
			// Prefer the best-ranked symbol at this same address.
			k := j
			for k > 0 && t.syms[k-1].addr == s.addr {
				k--
			}
			for ; k <= j; k++ {
				if t.syms[k].size > 0 && pc-t.syms[k].addr < t.syms[k].size {
					return &t.syms[k]
				}
			}
			return s
		}
	}
	if i >= 0 {
		s := &t.syms[i]
		if s.size == 0 && t.inSection(s, pc) {
			k := i
			for k > 0 && t.syms[k-1].addr == s.addr {
				k--
			}
			return &t.syms[k]
		}
	}
	return nil
}
