package elfsym

import (
	"debug/elf"
	"encoding/binary"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// Symbol address indexes in the persistent index cache (indexcache): the
// code symbols of a binary (its .symtab, else .dynsym, with the PLT's
// synthetic NAME@plt symbols) and of its debug file, sorted as gdb sorts
// minimal symbols, are stored under the build-id and the file's size, so
// a later process reads the sorted index instead of decoding the symbol
// table, the PLT relocations and sorting. Names stay in the file's string
// table (an entry keeps its offset); only the synthetic names are stored.

// SymIndexVersion is part of the key: entries of another layout are misses.
const SymIndexVersion = "1"

// Entry layout: nameOff u32, shndx u16, bind u8, flags u8, addr u64, size u64.
const symEntrySize = 24

const (
	symFlagFun       = 1 << 0
	symFlagSynthetic = 1 << 1 // nameOff indexes the stored names, not the string table
)

// Which table an index was built from.
const (
	symSourceNone   = 0 // only synthetic symbols
	symSourceSymtab = 1
	symSourceDynsym = 2
)

// SymIndexHeader is source u32, count u32, names length u32.
const SymIndexHeader = 12

// symbolsKey names the index of o's symbols in role ("bin", "dbg"); ""
// when o's symbol tables and relocations are small enough to read faster
// than a cache entry opens (cacheMinSize, as for sections).
func symbolsKey(o *object.Object, role string) string {
	if o == nil || len(o.Data) == 0 || o.Elf == nil {
		return ""
	}
	var size uint64
	for _, s := range o.Elf.Sections {
		switch s.Name {
		case ".symtab", ".dynsym", ".rela.plt", ".rela.dyn":
			size += s.Size
		}
	}
	if size < object.CacheMinSize {
		return ""
	}
	// The table is built from the symbol, string and relocation sections
	// and the PLT's addresses: the key covers their headers and bytes.
	return o.DerivedKey("syms"+SymIndexVersion+"-"+role, ".symtab", ".strtab", ".dynsym", ".dynstr",
		".rela.plt", ".rela.dyn", ".rel.plt", ".rel.dyn", ".plt", ".plt.sec", ".plt.got", ".got", ".got.plt")
}

// EncodeSymbols serializes t (nil: no symbols) for the cache.
func EncodeSymbols(t *SymbolTable) []byte {
	source := uint32(symSourceNone)
	var syms []ElfSymbol
	if t != nil {
		syms = t.Syms
		if t.Raw != nil {
			source = symSourceSymtab
			if t.Dynamic {
				source = symSourceDynsym
			}
		}
	}
	var names []byte
	out := make([]byte, SymIndexHeader, SymIndexHeader+len(syms)*symEntrySize)
	le := binary.LittleEndian
	for i := range syms {
		s := &syms[i]
		var e [symEntrySize]byte
		off, flags := s.nameOff, byte(0)
		if s.IsFun {
			flags |= symFlagFun
		}
		if s.Name != "" {
			flags |= symFlagSynthetic
			off = uint32(len(names))
			names = append(append(names, s.Name...), 0)
		}
		le.PutUint32(e[0:], off)
		le.PutUint16(e[4:], s.Shndx)
		e[6], e[7] = byte(s.Bind), flags
		le.PutUint64(e[8:], s.Addr)
		le.PutUint64(e[16:], s.Size)
		out = append(out, e[:]...)
	}
	le.PutUint32(out[0:], source)
	le.PutUint32(out[4:], uint32(len(syms)))
	le.PutUint32(out[8:], uint32(len(names)))
	return append(out, names...)
}

// DecodeSymbols rebuilds o's table from a cached index; ok is false when
// the index does not fit o (then it is rebuilt): every name must lie in
// its string table and every section index in its section headers.
func DecodeSymbols(o *object.Object, b []byte) (t *SymbolTable, ok bool) {
	le := binary.LittleEndian
	if len(b) < SymIndexHeader {
		return nil, false
	}
	source, count, nlen := le.Uint32(b[0:]), uint64(le.Uint32(b[4:])), uint64(le.Uint32(b[8:]))
	if count > maxSymbols || uint64(len(b)) != SymIndexHeader+count*symEntrySize+nlen {
		return nil, false
	}
	names := b[SymIndexHeader+count*symEntrySize:]
	switch source {
	case symSourceNone:
		if count == 0 {
			return nil, true
		}
		t = &SymbolTable{sections: o.Elf.Sections}
	case symSourceSymtab, symSourceDynsym:
		name := ".symtab"
		if source == symSourceDynsym {
			name = ".dynsym"
		}
		if t = ReadSymbolsTable(o, o.Elf.Section(name)); t == nil {
			return nil, false
		}
	default:
		return nil, false
	}
	t.Syms = make([]ElfSymbol, count)
	for i := range t.Syms {
		e := b[SymIndexHeader+i*symEntrySize:]
		s := &t.Syms[i]
		s.nameOff, s.Shndx, s.Bind = le.Uint32(e[0:]), le.Uint16(e[4:]), elf.SymBind(e[6])
		s.IsFun, s.Addr, s.Size = e[7]&symFlagFun != 0, le.Uint64(e[8:]), le.Uint64(e[16:])
		if int(s.Shndx) >= len(o.Elf.Sections) && s.Shndx < uint16(elf.SHN_LORESERVE) {
			return nil, false
		}
		if e[7]&symFlagSynthetic != 0 {
			if uint64(s.nameOff) >= nlen {
				return nil, false
			}
			s.Name = cString(names, s.nameOff)
			s.nameOff = 0
			continue
		}
		if uint64(s.nameOff) >= uint64(len(t.strs)) {
			return nil, false
		}
	}
	return t, true
}

// CachedSymbols returns o's table in role from the cache, or builds it
// with build and stores it.
func CachedSymbols(o *object.Object, role string, build func() *SymbolTable) *SymbolTable {
	key := symbolsKey(o, role)
	if key == "" {
		return build()
	}
	if e := object.IndexCache().Get(key); e != nil {
		t, ok := DecodeSymbols(o, e.Data)
		e.Close()
		if ok {
			return t
		}
	}
	t := build()
	object.IndexCache().Put(key, EncodeSymbols(t))
	return t
}
