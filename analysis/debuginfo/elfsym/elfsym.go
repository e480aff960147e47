package elfsym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// maxSymbols caps the number of symbols read from one symbol table.
const maxSymbols = 1 << 24

// ElfSymbol is one function-like symbol of .symtab or .dynsym. Its name
// stays in the string table (nameOff) until asked for; synthetic symbols
// (PLT stubs) carry theirs in name.
type ElfSymbol struct {
	Name    string
	nameOff uint32
	Addr    uint64
	Size    uint64
	Bind    elf.SymBind
	IsFun   bool
	Shndx   uint16
}

// SymbolTable is a symbol table sorted by address for pc lookups. Names
// are read from the string table only for the symbols a lookup returns;
// the name → address map is built only when a lookup by name cannot be
// answered from the dynamic hash table (gnuhash.go).
type SymbolTable struct {
	Syms []ElfSymbol // code symbols sorted by address, preferred first at equal address
	strs []byte      // the string table the syms' nameOff index
	// sections bound zero-sized symbols to their own section.
	sections []*elf.Section

	Dynamic bool   // a .dynsym
	Raw     []byte // the symbol table's entries, for byName
	EntSize int
	bo      binary.ByteOrder

	byNameOnce sync.Once
	byName     map[string]uint64
	global     map[string]bool // byName's symbol is a global or weak code symbol
	scans      atomic.Int32    // lookups by name answered by a scan (ByName)
}

// nameBytes is the name of s without copying it out of the string table.
func (t *SymbolTable) nameBytes(s *ElfSymbol) []byte {
	if s.Name != "" {
		return []byte(s.Name)
	}
	return cStringBytes(t.strs, s.nameOff)
}

// Name is the name of s.
func (t *SymbolTable) Name(s *ElfSymbol) string {
	if s.Name != "" {
		return s.Name
	}
	return cString(t.strs, s.nameOff)
}

// Names returns the name → address map of every data and code symbol,
// built on first use: a global definition wins over a local one.
func (t *SymbolTable) Names() map[string]uint64 {
	if t == nil {
		return nil
	}
	t.byNameOnce.Do(func() {
		t.byName, t.global = map[string]uint64{}, map[string]bool{}
		if t.EntSize == 0 {
			return
		}
		t.each(func(e rawSym) {
			if e.typ == elf.STT_TLS {
				return
			}
			name := cString(t.strs, e.nameOff)
			if _, dup := t.byName[name]; !dup || e.bind == elf.STB_GLOBAL {
				t.byName[name] = e.value
				t.global[name] = t.isCode(e) && e.bind != elf.STB_LOCAL
			}
		})
	})
	return t.byName
}

// inSection reports whether pc lies in the section of s.
func (t *SymbolTable) inSection(s *ElfSymbol, pc uint64) bool {
	if int(s.Shndx) >= len(t.sections) {
		return false
	}
	sec := t.sections[s.Shndx]
	return pc >= sec.Addr && pc-sec.Addr < sec.Size
}

// ReadSymbols parses the named symbol table section (System V ABI, "Symbol
// Table": Elf32_Sym / Elf64_Sym) straight from the mapping.
func ReadSymbols(o *object.Object, section string) *SymbolTable {
	t := readSymbolsRaw(o, section)
	if t != nil {
		t.sections = o.Elf.Sections
	}
	return t
}

// maxNameScans is how many lookups by name a table answers by scanning its
// entries before it builds the name map: a core's tail-call searches ask a
// handful of names, for which a scan of a few thousand entries is cheaper
// than a map of them all.
const maxNameScans = 16

// ByName returns the address of the symbol named name as Names picks it
// (a global definition wins over a local one) and whether that symbol is a
// global or weak code symbol (GlobalName), without building the name map
// for the first lookups.
func (t *SymbolTable) ByName(name string) (addr uint64, global, ok bool) {
	if t == nil || t.EntSize == 0 {
		return 0, false, false
	}
	if t.scans.Add(1) > maxNameScans {
		addr, ok = t.Names()[name]
		return addr, ok && t.global[name], ok
	}
	t.each(func(e rawSym) {
		if e.typ == elf.STT_TLS || (ok && e.bind != elf.STB_GLOBAL) || string(cStringBytes(t.strs, e.nameOff)) != name {
			return
		}
		addr, global, ok = e.value, t.isCode(e) && e.bind != elf.STB_LOCAL, true
	})
	return addr, global, ok
}

// GlobalName reports whether names()' symbol name is a global or weak code
// symbol.
func (t *SymbolTable) GlobalName(name string) bool {
	t.Names()
	return t.global[name]
}

// ReadSymbolsTable wraps symbol table section s and its string table
// without reading any entry; nil if s is not one.
func ReadSymbolsTable(o *object.Object, s *elf.Section) *SymbolTable {
	if o == nil || s == nil || (s.Type != elf.SHT_SYMTAB && s.Type != elf.SHT_DYNSYM) {
		return nil
	}
	data := o.RawSection(s)
	if data == nil || int(s.Link) >= len(o.Elf.Sections) {
		return nil
	}
	t := &SymbolTable{strs: o.RawSection(o.Elf.Sections[s.Link]), Raw: data, EntSize: 24, bo: o.Elf.ByteOrder,
		sections: o.Elf.Sections, Dynamic: s.Type == elf.SHT_DYNSYM}
	if o.Elf.Class == elf.ELFCLASS32 {
		t.EntSize = 16
	}
	return t
}

// isCode reports whether e is a code symbol: a function, or an untyped
// symbol in an executable section.
func (t *SymbolTable) isCode(e rawSym) bool {
	if e.typ == elf.STT_FUNC || e.typ == elf.STT_GNU_IFUNC {
		return true
	}
	return e.typ == elf.STT_NOTYPE && int(e.shndx) < len(t.sections) &&
		t.sections[e.shndx].Flags&elf.SHF_EXECINSTR != 0
}

func readSymbolsRaw(o *object.Object, section string) *SymbolTable {
	if o == nil {
		return nil
	}
	t := ReadSymbolsTable(o, o.Elf.Section(section))
	if t == nil {
		return nil
	}
	t.each(func(e rawSym) {
		if t.isCode(e) {
			t.Syms = append(t.Syms, ElfSymbol{nameOff: e.nameOff, Addr: e.value, Size: e.size, Bind: e.bind,
				IsFun: e.typ != elf.STT_NOTYPE, Shndx: e.shndx})
		}
	})
	t.sortByAddress()
	// gdb drops exact duplicates (minsyms.c compact_minimal_symbols).
	out := t.Syms[:0]
	for i := range t.Syms {
		if i > 0 && t.Syms[i].Addr == t.Syms[i-1].Addr &&
			bytes.Equal(t.nameBytes(&t.Syms[i]), t.nameBytes(&t.Syms[i-1])) {
			continue
		}
		out = append(out, t.Syms[i])
	}
	t.Syms = out
	return t
}

// sortByAddress sorts the symbols as gdb sorts minimal symbols: by
// address, then name (minsyms.c). Names are compared in place, and only
// between symbols at one address.
func (t *SymbolTable) sortByAddress() {
	sort.Slice(t.Syms, func(i, j int) bool {
		a, b := &t.Syms[i], &t.Syms[j]
		if a.Addr != b.Addr {
			return a.Addr < b.Addr
		}
		return bytes.Compare(t.nameBytes(a), t.nameBytes(b)) < 0
	})
}

// rawSym is one entry of a symbol table as read by each.
type rawSym struct {
	nameOff     uint32
	typ         elf.SymType
	bind        elf.SymBind
	shndx       uint16
	value, size uint64
}

// each calls fn for every defined, named function, object, TLS or untyped
// symbol (System V ABI, "Symbol Table": Elf32_Sym / Elf64_Sym), without
// reading names.
func (t *SymbolTable) each(fn func(rawSym)) {
	n := min(len(t.Raw)/t.EntSize, maxSymbols)
	for i := 1; i < n; i++ {
		e, ok := t.entry(i)
		if !ok || e.nameOff == 0 || int(e.nameOff) >= len(t.strs) || t.strs[e.nameOff] == 0 {
			continue
		}
		if knownSymType(e.typ) {
			fn(e)
		}
	}
}

// entry decodes symbol i; ok is false for undefined and special-section symbols.
func (t *SymbolTable) entry(i int) (rawSym, bool) {
	if i <= 0 || (i+1)*t.EntSize > len(t.Raw) {
		return rawSym{}, false
	}
	e := t.Raw[i*t.EntSize : (i+1)*t.EntSize]
	bo := t.bo
	var r rawSym
	var info uint8
	if t.EntSize == 24 {
		r.nameOff, info, r.shndx = bo.Uint32(e[0:]), e[4], bo.Uint16(e[6:])
		r.value, r.size = bo.Uint64(e[8:]), bo.Uint64(e[16:])
	} else {
		r.nameOff = bo.Uint32(e[0:])
		r.value, r.size = uint64(bo.Uint32(e[4:])), uint64(bo.Uint32(e[8:]))
		info, r.shndx = e[12], bo.Uint16(e[14:])
	}
	r.typ, r.bind = elf.ST_TYPE(info), elf.ST_BIND(info)
	if r.shndx == uint16(elf.SHN_UNDEF) || r.shndx >= uint16(elf.SHN_LORESERVE) {
		return r, false
	}
	return r, true
}

func cString(b []byte, off uint32) string { return string(cStringBytes(b, off)) }

// cStringBytes is the NUL-terminated string at off in b, in place.
func cStringBytes(b []byte, off uint32) []byte {
	if uint64(off) >= uint64(len(b)) {
		return nil
	}
	b = b[off:]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return b
}

// maxSymbolScan bounds the backward scan over zero-sized symbols.
const maxSymbolScan = 4096

// Lookup returns the symbol for pc as gdb's lookup_minimal_symbol_by_pc_section
// picks it: the last symbol (in address, then name order) at or below pc in
// pc's section, skipping back over zero-sized symbols to a sized one; a sized
// symbol that does not reach pc yields the nearest zero-sized one, or nothing.
func (t *SymbolTable) Lookup(pc uint64) *ElfSymbol {
	if t == nil || len(t.Syms) == 0 {
		return nil
	}
	hi := sort.Search(len(t.Syms), func(i int) bool { return t.Syms[i].Addr > pc }) - 1
	zero := -1
	for n := 0; hi >= 0 && n < maxSymbolScan; n++ {
		s := &t.Syms[hi]
		if !t.inSection(s, pc) {
			hi--
			continue
		}
		if s.Size == 0 {
			if zero < 0 {
				zero = hi
			}
			hi--
			continue
		}
		break
	}
	if hi < 0 || t.Syms[hi].Size == 0 || !t.inSection(&t.Syms[hi], pc) {
		if zero >= 0 {
			return &t.Syms[zero]
		}
		return nil
	}
	if s := &t.Syms[hi]; pc-s.Addr >= s.Size {
		if zero >= 0 {
			return &t.Syms[zero]
		}
		return nil
	}
	return &t.Syms[hi]
}
