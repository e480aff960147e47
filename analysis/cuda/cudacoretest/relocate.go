package cudacoretest

import (
	"errors"
	"fmt"
)

// RelocateCubin returns a copy of a non-relocated cubin as the driver
// loads it at base: each code section gets a device address (256-byte
// aligned, in section order), function symbols become addresses, and the
// relocations of .debug_line are applied and then removed, so line
// sequences carry device addresses.
func RelocateCubin(cubin []byte, base uint64) ([]byte, error) {
	b := append([]byte(nil), cubin...)
	if len(b) < 64 || string(b[:4]) != "\x7fELF" {
		return nil, errors.New("not an ELF image")
	}
	img := &elfImage{b: b, shoff: le.Uint64(b[40:]), shent: uint64(le.Uint16(b[58:])), shnum: uint64(le.Uint16(b[60:]))}
	if img.shent < 64 || img.shoff+img.shent*img.shnum > uint64(len(b)) {
		return nil, errors.New("section headers out of range")
	}
	addr := img.placeCode(base)
	var symtab []byte
	for i := uint64(1); i < img.shnum; i++ {
		if le.Uint32(img.hdr(i)[4:]) == 2 { // SHT_SYMTAB
			var err error
			if symtab, err = img.data(i); err != nil {
				return nil, err
			}
		}
	}
	// Apply .debug_line relocations with the original symbol values.
	if err := img.applyLineRelocations(addr, symtab); err != nil {
		return nil, err
	}
	for o := uint64(24); o+24 <= uint64(len(symtab)); o += 24 {
		e := symtab[o:]
		shndx := uint64(le.Uint16(e[6:]))
		if shndx > 0 && shndx < img.shnum && addr[shndx] != 0 {
			le.PutUint64(e[8:], addr[shndx]+le.Uint64(e[8:]))
		}
	}
	return b, nil
}

// elfImage is an ELF file being relocated in place.
type elfImage struct {
	b                   []byte
	shoff, shent, shnum uint64
}

// hdr is section header i.
func (img *elfImage) hdr(i uint64) []byte {
	return img.b[img.shoff+i*img.shent : img.shoff+(i+1)*img.shent]
}

// data is the contents of section i.
func (img *elfImage) data(i uint64) ([]byte, error) {
	h := img.hdr(i)
	off, size := le.Uint64(h[24:]), le.Uint64(h[32:])
	if off+size > uint64(len(img.b)) || off+size < off {
		return nil, fmt.Errorf("section %d out of range", i)
	}
	return img.b[off : off+size], nil
}

// placeCode gives each code section its device address from base on and
// returns the address of every section (0 for the others).
func (img *elfImage) placeCode(base uint64) []uint64 {
	addr := make([]uint64, img.shnum)
	next := base
	for i := uint64(1); i < img.shnum; i++ {
		h := img.hdr(i)
		if le.Uint64(h[8:])&0x4 == 0 { // SHF_EXECINSTR
			continue
		}
		next = (next + 0xff) &^ 0xff
		addr[i] = next
		le.PutUint64(h[16:], next)
		next += le.Uint64(h[32:])
	}
	return addr
}

// applyLineRelocations applies the REL and RELA sections of .debug_line
// against the symbols' sections placed at addr, and turns them into
// SHT_NULL.
func (img *elfImage) applyLineRelocations(addr []uint64, symtab []byte) error {
	var debugLine uint64
	for i := uint64(1); i < img.shnum; i++ {
		if name := sectionName(img.b, img.hdr, le.Uint16(img.b[62:]), le.Uint32(img.hdr(i))); name == ".debug_line" {
			debugLine = i
		}
	}
	for i := uint64(1); i < img.shnum && debugLine != 0; i++ {
		h := img.hdr(i)
		typ := le.Uint32(h[4:])
		if (typ != 9 && typ != 4) || uint64(le.Uint32(h[44:])) != debugLine {
			continue
		}
		rel, err := img.data(i)
		if err != nil {
			return err
		}
		dl, err := img.data(debugLine)
		if err != nil {
			return err
		}
		img.relocate(dl, rel, typ == 4, addr, symtab)
		le.PutUint32(h[4:], 0) // SHT_NULL: applied
	}
	return nil
}

// relocate applies the relocations rel (RELA when rela, else REL) to dl.
func (img *elfImage) relocate(dl, rel []byte, rela bool, addr []uint64, symtab []byte) {
	symAddr := func(sym uint64) (uint64, bool) {
		if sym == 0 || (sym+1)*24 > uint64(len(symtab)) {
			return 0, false
		}
		e := symtab[sym*24:]
		shndx := uint64(le.Uint16(e[6:]))
		if shndx == 0 || shndx >= img.shnum {
			return 0, false
		}
		return addr[shndx] + le.Uint64(e[8:]), true
	}
	ent := uint64(16)
	if rela {
		ent = 24
	}
	for o := uint64(0); o+ent <= uint64(len(rel)); o += ent {
		off := le.Uint64(rel[o:])
		sym := le.Uint64(rel[o+8:]) >> 32
		a, ok := symAddr(sym)
		if !ok || off+8 > uint64(len(dl)) || addr[le.Uint16(symtab[sym*24+6:])] == 0 {
			continue // e.g. the .debug_str base: not an address
		}
		if rela {
			a += le.Uint64(rel[o+16:])
		} else {
			a += le.Uint64(dl[off:])
		}
		le.PutUint64(dl[off:], a)
	}
}

func sectionName(b []byte, hdr func(uint64) []byte, shstrndx uint16, off uint32) string {
	h := hdr(uint64(shstrndx))
	base := le.Uint64(h[24:]) + uint64(off)
	for i := base; i < uint64(len(b)); i++ {
		if b[i] == 0 {
			return string(b[base:i])
		}
	}
	return ""
}

// SymbolAddress is the value of the symbol name in an ELF64 cubin: its
// device address once RelocateCubin placed it.
func SymbolAddress(cubin []byte, name string) (uint64, error) {
	if len(cubin) < 64 || string(cubin[:4]) != "\x7fELF" {
		return 0, errors.New("not an ELF image")
	}
	img := &elfImage{b: cubin, shoff: le.Uint64(cubin[40:]), shent: uint64(le.Uint16(cubin[58:])), shnum: uint64(le.Uint16(cubin[60:]))}
	if img.shent < 64 || img.shoff+img.shent*img.shnum > uint64(len(cubin)) {
		return 0, errors.New("section headers out of range")
	}
	for i := uint64(1); i < img.shnum; i++ {
		h := img.hdr(i)
		if le.Uint32(h[4:]) != 2 { // SHT_SYMTAB
			continue
		}
		syms, err := img.data(i)
		if err != nil {
			return 0, err
		}
		strs, err := img.data(uint64(le.Uint32(h[40:])))
		if err != nil {
			return 0, err
		}
		for o := 0; o+24 <= len(syms); o += 24 {
			if n := uint64(le.Uint32(syms[o:])); n < uint64(len(strs)) && cstr(strs[n:]) == name {
				return le.Uint64(syms[o+8:]), nil
			}
		}
	}
	return 0, fmt.Errorf("no symbol %s", name)
}

func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
