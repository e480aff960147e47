package cuda

import (
	"encoding/binary"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// ELF constants used here (System V gABI, "ELF Header" and "Sections").
const (
	elfClass64   = 2
	elfData2LSB  = 1
	emCUDA       = 190 // EM_CUDA
	shtSymtab    = 2
	shtStrtab    = 3
	shtNobits    = 8
	shfAlloc     = 0x2
	shfExecInstr = 0x4
	sttFunc      = 2
	sttSection   = 3
	shnUndef     = 0
	shnXindex    = 0xffff
	elfHeader64  = 64
	shdrSize64   = 64
	symSize64    = 24
	// maxSections caps the section count read from a header: real cubins
	// carry a few hundred, GPU core dumps a few thousand.
	maxSections = 1 << 20
)

// FormatError reports bytes that are not what the reader expected: Format
// names the structure being read. It is analysis's one FormatError type.
type FormatError = cursor.FormatError

// formatErr is a FormatError in the structure what at file offset off (0:
// the ELF header's own checks, which name no offset).
func formatErr(what string, off uint64, format string, args ...any) error {
	o := int64(off)
	if off == 0 {
		o = cursor.NoOffset
	}
	return &FormatError{Format: what, Off: o, Msg: fmt.Sprintf(format, args...)}
}

// elfFile is a little-endian ELF64 image read from memory. It is written for
// NVIDIA's two ELF dialects — cubins (e_machine EM_CUDA, e_version 0x70 or
// more, which debug/elf refuses) and GPU core dumps (ELFOSABI_CUDA) — and
// checks every offset against the image.
type elfFile struct {
	data     []byte
	osABI    byte
	abiVer   byte
	typ      uint16
	machine  uint16
	version  uint32
	flags    uint32
	sections []elfSection
}

// elfSection is one section header (gABI "Section Header") with its name.
type elfSection struct {
	index     int
	Name      string
	Type      uint32
	Flags     uint64
	Addr      uint64
	Offset    uint64
	Size      uint64
	Link      uint32
	Info      uint32
	Addralign uint64
	Entsize   uint64
}

var le = binary.LittleEndian

// parseELF reads the ELF header and section headers of b.
func parseELF(b []byte) (*elfFile, error) {
	if len(b) < elfHeader64 || string(b[:4]) != "\x7fELF" {
		return nil, formatErr("ELF header", 0, "not an ELF file")
	}
	if b[4] != elfClass64 || b[5] != elfData2LSB {
		return nil, formatErr("ELF header", 0, "class %d data %d: only little-endian ELF64 is supported", b[4], b[5])
	}
	f := &elfFile{
		data:    b,
		osABI:   b[7],
		abiVer:  b[8],
		typ:     le.Uint16(b[16:]),
		machine: le.Uint16(b[18:]),
		version: le.Uint32(b[20:]),
		flags:   le.Uint32(b[48:]),
	}
	shoff := le.Uint64(b[40:])
	shentsize := uint64(le.Uint16(b[58:]))
	shnum := uint64(le.Uint16(b[60:]))
	shstrndx := uint64(le.Uint16(b[62:]))
	if shoff == 0 {
		return f, nil
	}
	if shentsize < shdrSize64 {
		return nil, formatErr("ELF header", 0, "section header size %d < %d", shentsize, shdrSize64)
	}
	if shoff >= uint64(len(b)) || uint64(len(b))-shoff < shentsize {
		return nil, formatErr("ELF header", 0, "section headers at %#x outside the file (%d bytes)", shoff, len(b))
	}
	first := b[shoff:]
	if shnum == 0 { // gABI: the real count is in section 0's sh_size
		shnum = le.Uint64(first[32:])
	}
	if shstrndx == shnXindex {
		shstrndx = uint64(le.Uint32(first[24:]))
	}
	if shnum > maxSections || shnum > (uint64(len(b))-shoff)/shentsize {
		return nil, formatErr("ELF header", 0, "%d section headers do not fit in the file", shnum)
	}
	f.sections = make([]elfSection, shnum)
	nameOffs := make([]uint32, shnum)
	for i := range f.sections {
		h := b[shoff+uint64(i)*shentsize:]
		nameOffs[i] = le.Uint32(h)
		f.sections[i] = elfSection{
			index:     i,
			Type:      le.Uint32(h[4:]),
			Flags:     le.Uint64(h[8:]),
			Addr:      le.Uint64(h[16:]),
			Offset:    le.Uint64(h[24:]),
			Size:      le.Uint64(h[32:]),
			Link:      le.Uint32(h[40:]),
			Info:      le.Uint32(h[44:]),
			Addralign: le.Uint64(h[48:]),
			Entsize:   le.Uint64(h[56:]),
		}
	}
	if shstrndx < shnum {
		names, _ := f.sectionData(&f.sections[shstrndx])
		for i := range f.sections {
			f.sections[i].Name = cString(names, uint64(nameOffs[i]))
		}
	}
	return f, nil
}

// sectionData returns the bytes of s (nil for SHT_NOBITS), checked against
// the file.
func (f *elfFile) sectionData(s *elfSection) ([]byte, error) {
	if s.Type == shtNobits || s.Size == 0 {
		return nil, nil
	}
	if s.Offset > uint64(len(f.data)) || uint64(len(f.data))-s.Offset < s.Size {
		return nil, formatErr("section "+s.Name, s.Offset, "%d bytes run past the end of the file (%d bytes)", s.Size, len(f.data))
	}
	return f.data[s.Offset : s.Offset+s.Size : s.Offset+s.Size], nil
}

// section returns the first section called name, or nil.
func (f *elfFile) section(name string) *elfSection {
	for i := range f.sections {
		if f.sections[i].Name == name {
			return &f.sections[i]
		}
	}
	return nil
}

// elfSymbol is one symbol table entry (gABI "Symbol Table").
type elfSymbol struct {
	Name    string
	Info    byte
	Other   byte
	Shndx   uint16
	Value   uint64
	Size    uint64
	section int // resolved section index (SHN_XINDEX is not used by cubins)
}

func (s *elfSymbol) kind() byte { return s.Info & 0xf }

// symbols reads the SHT_SYMTAB section, skipping the null symbol.
func (f *elfFile) symbols() ([]elfSymbol, error) {
	var tab *elfSection
	for i := range f.sections {
		if f.sections[i].Type == shtSymtab {
			tab = &f.sections[i]
			break
		}
	}
	if tab == nil {
		return nil, nil
	}
	data, err := f.sectionData(tab)
	if err != nil {
		return nil, err
	}
	var strs []byte
	if int(tab.Link) < len(f.sections) {
		strs, _ = f.sectionData(&f.sections[tab.Link])
	}
	ent := tab.Entsize
	if ent < symSize64 {
		ent = symSize64
	}
	n := uint64(len(data)) / ent
	syms := make([]elfSymbol, 0, n)
	for i := uint64(1); i < n; i++ {
		e := data[i*ent:]
		s := elfSymbol{
			Name:  cString(strs, uint64(le.Uint32(e))),
			Info:  e[4],
			Other: e[5],
			Shndx: le.Uint16(e[6:]),
			Value: le.Uint64(e[8:]),
			Size:  le.Uint64(e[16:]),
		}
		s.section = int(s.Shndx)
		syms = append(syms, s)
	}
	return syms, nil
}

// cString returns the NUL-terminated string at off in b ("" when off is out
// of range); unterminated strings end at the end of b.
func cString(b []byte, off uint64) string {
	if off >= uint64(len(b)) {
		return ""
	}
	s := b[off:]
	for i, c := range s {
		if c == 0 {
			return string(s[:i])
		}
	}
	return string(s)
}
