package elfsym

import (
	"debug/elf"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// Names for PLT stubs. A pc in a procedure linkage table entry belongs to no
// symbol of the file; gdb names it from BFD's synthetic symbols,
// "printf@plt": the symbol of the relocation that fills the GOT slot the
// entry jumps through (x86-64 psABI §5.2 "Procedure Linkage Table";
// binutils' elfxx-x86.c _bfd_x86_elf_get_synthetic_symtab).

// maxPLTEntries caps the PLT entries decoded in one file.
const maxPLTEntries = 1 << 20

// x86-64 relocation types (x86-64 psABI Table 4.10).
const (
	rX86_64GlobDat   = 6
	rX86_64JumpSlot  = 7
	rX86_64Irelative = 37
)

// gotSlot is what a relocation puts in one GOT slot.
type gotSlot struct {
	sym    uint32 // .dynsym index, 0 for none
	addend int64
	typ    uint32
}

// PltSymbols returns one zero-sized code symbol per x86-64 PLT entry whose
// GOT slot a relocation fills, named NAME@plt (or *ABS*+0xADDR@plt for an
// IRELATIVE slot, as BFD names them).
func PltSymbols(o *object.Object) []ElfSymbol {
	if o == nil || o.Elf.Machine != elf.EM_X86_64 || o.Elf.Class != elf.ELFCLASS64 {
		return nil
	}
	slots := map[uint64]gotSlot{}
	var dynsym *elf.Section
	for _, s := range o.Elf.Sections {
		if s.Type != elf.SHT_RELA || (s.Name != ".rela.plt" && s.Name != ".rela.dyn") {
			continue
		}
		if int(s.Link) < len(o.Elf.Sections) && o.Elf.Sections[s.Link].Type == elf.SHT_DYNSYM {
			dynsym = o.Elf.Sections[s.Link]
		}
		data := o.RawSection(s)
		bo := o.Elf.ByteOrder
		for off := 0; off+24 <= len(data) && len(slots) < maxPLTEntries; off += 24 {
			info := bo.Uint64(data[off+8:])
			g := gotSlot{sym: uint32(info >> 32), typ: uint32(info), addend: int64(bo.Uint64(data[off+16:]))}
			switch g.typ {
			case rX86_64GlobDat, rX86_64JumpSlot, rX86_64Irelative:
				slots[bo.Uint64(data[off:])] = g
			}
		}
	}
	if len(slots) == 0 {
		return nil
	}
	names := dynamicSymbolNames(o, dynsym)
	var out []ElfSymbol
	for i, s := range o.Elf.Sections {
		switch s.Name {
		case ".plt", ".plt.sec", ".plt.got", ".plt.bnd":
		default:
			continue
		}
		if s.Flags&elf.SHF_EXECINSTR == 0 || s.Type != elf.SHT_PROGBITS {
			continue
		}
		code := o.RawSection(s)
		size := s.Entsize
		if size != 8 && size != 16 {
			size = 16
			if s.Name == ".plt.got" {
				size = 8
			}
		}
		for off := uint64(0); off+size <= uint64(len(code)) && len(out) < maxPLTEntries; off += size {
			got, ok := pltJumpSlot(code[off:off+size], s.Addr+off)
			if !ok {
				continue
			}
			g, ok := slots[got]
			if !ok {
				continue
			}
			var name string
			switch {
			case g.typ == rX86_64Irelative:
				name = fmt.Sprintf("*ABS*+%#x@plt", g.addend)
			case int(g.sym) < len(names) && names[g.sym] != "":
				name = names[g.sym] + "@plt"
				if g.addend != 0 {
					name = fmt.Sprintf("%s+%#x@plt", names[g.sym], g.addend)
				}
			default:
				continue
			}
			out = append(out, ElfSymbol{Name: name, Addr: s.Addr + off, Bind: elf.STB_GLOBAL, IsFun: true, Shndx: uint16(i)})
		}
	}
	return out
}

// pltJumpSlot finds the GOT slot a PLT entry at addr jumps through: the
// "jmp *disp32(%rip)" (ff 25) at the start of the entry, after an endbr64
// (f3 0f 1e fa) and/or a bnd prefix (f2).
func pltJumpSlot(entry []byte, addr uint64) (uint64, bool) {
	for _, at := range []int{0, 1, 4, 5} {
		if at+6 > len(entry) || entry[at] != 0xff || entry[at+1] != 0x25 {
			continue
		}
		switch at {
		case 1, 5:
			if entry[at-1] != 0xf2 {
				continue
			}
		}
		if at >= 4 && (entry[0] != 0xf3 || entry[1] != 0x0f || entry[2] != 0x1e || entry[3] != 0xfa) {
			continue
		}
		disp := int32(uint32(entry[at+2]) | uint32(entry[at+3])<<8 | uint32(entry[at+4])<<16 | uint32(entry[at+5])<<24)
		return addr + uint64(at) + 6 + uint64(int64(disp)), true
	}
	return 0, false
}

// dynamicSymbolNames returns the names of a dynamic symbol table by index.
func dynamicSymbolNames(o *object.Object, s *elf.Section) []string {
	if s == nil || int(s.Link) >= len(o.Elf.Sections) {
		return nil
	}
	data := o.RawSection(s)
	strs := o.RawSection(o.Elf.Sections[s.Link])
	n := min(len(data)/24, maxSymbols)
	names := make([]string, n)
	for i := 1; i < n; i++ {
		names[i] = cString(strs, o.Elf.ByteOrder.Uint32(data[i*24:]))
	}
	return names
}

// WithSynthetic returns t with extra symbols merged in, in gdb's order.
func (t *SymbolTable) WithSynthetic(o *object.Object, extra []ElfSymbol) *SymbolTable {
	if len(extra) == 0 {
		return t
	}
	if t == nil {
		t = &SymbolTable{sections: o.Elf.Sections}
	}
	t.Syms = append(t.Syms, extra...)
	t.sortByAddress()
	return t
}
