// Package cudacoretest builds synthetic NVIDIA GPU core dumps for tests:
// ELF images laid out as NVIDIA's public cudacoredump.h describes them
// (cuda-gdb's libcudacore), with real cubins inside, relocated the way the
// driver loads them. Row sizes are configurable, so readers can be tested
// against the layouts of several driver versions.
package cudacoretest

import (
	"encoding/binary"
	"errors"
	"fmt"
)

var le = binary.LittleEndian

// Section types and 2015 row sizes (cudacoredump.h).
const (
	shtLoUser   = 0x80000000
	ShtElfImg   = shtLoUser + 6
	ShtRelfImg  = shtLoUser + 7
	ShtDevTable = shtLoUser + 9
	ShtCtxTable = shtLoUser + 10
	ShtSMTable  = shtLoUser + 11
	ShtGridTbl  = shtLoUser + 12
	ShtCTATable = shtLoUser + 13
	ShtWPTable  = shtLoUser + 14
	ShtLNTable  = shtLoUser + 15
	ShtModTable = shtLoUser + 16

	DevRow, CtxRow, GridRow, SMRow, CTARow, WarpRow, LaneRow, ModRow = 72, 40, 104, 8, 24, 32, 48, 8
)

// RowSizes are the sh_entsize values to write; zero means the 2015 size.
// Larger sizes model newer drivers (the 575+ device row is longer): the
// extra bytes are filled with 0xA5 so a reader that reads them shows it.
// Smaller sizes model rows written before a field existed.
type RowSizes struct {
	Device, Context, Grid, SM, CTA, Warp, Lane, Module int
}

// Spec describes the dump: one device running one grid, with a faulting
// lane in one warp and a healthy second warp in the same CTA.
type Spec struct {
	Rows RowSizes

	DeviceName, DeviceType, SMType string
	SMMajor, SMMinor, NumSMs       uint32

	ContextID uint64
	HostTID   uint32
	GridID    uint64
	GridDim   [3]uint32
	BlockDim  [3]uint32

	SM        uint32
	Block     [3]uint32
	WarpID    uint32
	Lane      uint32
	Thread    [3]uint32
	Exception uint32 // CUDBGException_t; 0 for a hang dumped through the pipe
	ErrorPC   uint64 // device address in the relocated image
	// PC of every lane (the faulting lane's too, unless ErrorPC is used).
	PC uint64

	// Cubin is a non-relocated cubin (as nvcc writes it); the dump holds
	// it relocated at Base, and also as is unless SkipNonRelocated.
	Cubin            []byte
	Base             uint64
	SkipNonRelocated bool
	// KernelEntry is the device address of the kernel (grid function).
	KernelEntry uint64

	// NoGrid leaves the grid table out (a CTA whose grid has no row).
	NoGrid bool
	// Extra sections are appended as given: malformed tables and leaves
	// for the reader's rejection paths (LLDB's nvgpu-core tests build the
	// same cases).
	Extra []RawSection
}

// RawSection is a section written as given. Link names the parent section
// ("" for sh_link 0); Size, when set, is written as sh_size instead of
// len(Data) (a section that claims to run past the end of the file).
type RawSection struct {
	Name    string
	Type    uint32
	Link    string
	Info    uint32
	Entsize uint64
	Addr    uint64
	Size    uint64
	Data    []byte
}

// Leaf section types of cudacoredump.h (per-lane, per-warp, per-CTA state).
const (
	ShtGlobalMem = shtLoUser + 2
	ShtLocalMem  = shtLoUser + 3
	ShtSharedMem = shtLoUser + 4
	ShtDevRegs   = shtLoUser + 5
	ShtBT        = shtLoUser + 8
	ShtDevPred   = shtLoUser + 17
	ShtParamMem  = shtLoUser + 18
	ShtDevURegs  = shtLoUser + 19
	ShtDevUPred  = shtLoUser + 20
)

type section struct {
	name      string
	typ       uint32
	link      uint32
	info      uint32
	entsize   uint64
	addralign uint64
	addr      uint64
	size      uint64 // sh_size when not len(data)
	data      []byte
}

// Build writes the dump described by s.
func Build(s Spec) ([]byte, error) {
	rows := s.Rows
	var str strtab
	str.add("")
	devSize := orDefault(rows.Device, DevRow)
	dev := row(devSize, DevRow,
		u64(0, str.add(s.DeviceName)), u64(8, str.add(s.DeviceType)), u64(16, str.add(s.SMType)),
		u32(24, 0), u32(28, 0x1b), u32(32, 0), u32(36, s.NumSMs), u32(40, 64), u32(44, 32), u32(48, 255),
		u32(52, 7), u32(56, s.SMMajor), u32(60, s.SMMinor), u32(64, 16), u32(68, 0))
	ctx := row(orDefault(rows.Context, CtxRow), CtxRow, u64(0, s.ContextID), u32(32, 0), u32(36, s.HostTID))
	mod := row(orDefault(rows.Module, ModRow), ModRow, u64(0, 0x5000))
	grid := row(orDefault(rows.Grid, GridRow), GridRow,
		u64(0, s.GridID), u64(8, s.ContextID), u64(16, s.KernelEntry), u64(24, s.KernelEntry), u64(32, 0x5000),
		u32(56, 1), u32(64, 3), u32(68, 32),
		u32(72, s.GridDim[0]), u32(76, s.GridDim[1]), u32(80, s.GridDim[2]),
		u32(84, s.BlockDim[0]), u32(88, s.BlockDim[1]), u32(92, s.BlockDim[2]), u32(100, s.HostTID))
	sm := row(orDefault(rows.SM, SMRow), SMRow, u32(0, s.SM))
	cta := row(orDefault(rows.CTA, CTARow), CTARow, u64(0, s.GridID), u32(8, s.Block[0]), u32(12, s.Block[1]), u32(16, s.Block[2]))
	warpSize, laneSize := orDefault(rows.Warp, WarpRow), orDefault(rows.Lane, LaneRow)
	warps := warpRows(s, warpSize)
	lanes, lanes2 := laneRows(s, laneSize)
	images, err := imageSections(s)
	if err != nil {
		return nil, err
	}
	// Section indexes: 0 null, 1 .shstrtab, 2 .strtab, then the tables in
	// this order (the links below depend on it).
	secs := []section{
		{name: ".shstrtab", typ: 3}, // filled in by writeELF
		{name: ".strtab", typ: 3, data: str.b},
		{name: ".cudbg.devtbl", typ: ShtDevTable, entsize: uint64(devSize), data: dev}, // 3
		{name: ".cudbg.ctxtbl", typ: ShtCtxTable, link: 3, entsize: uint64(orDefault(rows.Context, CtxRow)), data: ctx},               // 4
		{name: ".cudbg.modtbl", typ: ShtModTable, link: 4, info: 0, entsize: uint64(orDefault(rows.Module, ModRow)), data: mod},       // 5
		{name: ".cudbg.gridtbl.dev0", typ: ShtGridTbl, link: 3, info: 0, entsize: uint64(orDefault(rows.Grid, GridRow)), data: grid},  // 6
		{name: ".cudbg.smtbl.dev0", typ: ShtSMTable, link: 3, info: 0, entsize: uint64(orDefault(rows.SM, SMRow)), data: sm},          // 7
		{name: ".cudbg.ctatbl.dev0.sm0", typ: ShtCTATable, link: 7, info: 0, entsize: uint64(orDefault(rows.CTA, CTARow)), data: cta}, // 8
		{name: ".cudbg.wptbl.dev0.sm0.cta0", typ: ShtWPTable, link: 8, info: 0, entsize: uint64(warpSize), data: warps},               // 9
		{name: ".cudbg.lntbl.dev0.sm0.cta0.wp0", typ: ShtLNTable, link: 9, info: 0, entsize: uint64(laneSize), data: lanes},           // 10
		{name: ".cudbg.lntbl.dev0.sm0.cta0.wp1", typ: ShtLNTable, link: 9, info: 1, entsize: uint64(laneSize), data: lanes2},          // 11
	}
	if s.NoGrid {
		secs[5].typ, secs[5].data = 1, nil // PROGBITS: no grid table
	}
	secs, err = appendExtra(append(secs, images...), s.Extra)
	if err != nil {
		return nil, err
	}
	return writeELF(secs), nil
}

// strtab is a string table being written.
type strtab struct{ b []byte }

// add appends v and returns its offset.
func (t *strtab) add(v string) uint64 {
	off := uint64(len(t.b))
	t.b = append(t.b, v...)
	t.b = append(t.b, 0)
	return off
}

// orDefault is v, or def when v is 0.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// field is a value at an offset of a table row.
type field struct {
	off  int
	size int
	v    uint64
}

func u64(off int, v uint64) field { return field{off, 8, v} }
func u32(off int, v uint32) field { return field{off, 4, uint64(v)} }

// row is a table row of size bytes with the given fields; bytes past the
// default size def (the fields this layout knows) are 0xA5.
func row(size, def int, fs ...field) []byte {
	full := max(size, def)
	b := make([]byte, full)
	for i := def; i < full; i++ {
		b[i] = 0xA5
	}
	for _, f := range fs {
		if f.size == 8 {
			le.PutUint64(b[f.off:], f.v)
		} else {
			le.PutUint32(b[f.off:], uint32(f.v))
		}
	}
	return b[:size]
}

// warpRows are the two warps: the faulting one (error pc and exception
// flag) and the next.
func warpRows(s Spec, warpSize int) []byte {
	errValid := uint32(0)
	if s.Exception != 0 {
		errValid = 1
	}
	return append(
		row(warpSize, WarpRow, u64(0, s.ErrorPC), u32(8, s.WarpID), u32(12, 0xffffffff), u32(16, 0xffffffff), u32(24, errValid)),
		row(warpSize, WarpRow, u32(8, s.WarpID+1), u32(12, 0xffffffff), u32(16, 0xffffffff))...)
}

// laneRows are the 32 lanes of each warp; the faulting lane of the first
// has the exception (and the error pc).
func laneRows(s Spec, laneSize int) (lanes, lanes2 []byte) {
	for l := uint32(0); l < 32; l++ {
		exc := uint32(0)
		pc := s.PC
		if l == s.Lane {
			exc = s.Exception
			if s.Exception != 0 {
				pc = s.ErrorPC
			}
		}
		tid := [3]uint32{s.Thread[0] - s.Lane + l, s.Thread[1], s.Thread[2]}
		lanes = append(lanes, row(laneSize, LaneRow, u64(0, pc), u64(8, pc), u32(16, l),
			u32(20, tid[0]), u32(24, tid[1]), u32(28, tid[2]), u32(32, exc))...)
		lanes2 = append(lanes2, row(laneSize, LaneRow, u64(0, s.PC), u64(8, s.PC), u32(16, l),
			u32(20, tid[0]+32), u32(24, tid[1]), u32(28, tid[2]))...)
	}
	return lanes, lanes2
}

// imageSections are the cubin relocated at s.Base and, unless
// s.SkipNonRelocated, as it is.
func imageSections(s Spec) ([]section, error) {
	if s.Cubin == nil {
		return nil, nil
	}
	rel, err := RelocateCubin(s.Cubin, s.Base)
	if err != nil {
		return nil, err
	}
	images := []section{{name: ".cudbg.relfimg.dev0.0", typ: ShtRelfImg, addralign: 8, data: rel}}
	if !s.SkipNonRelocated {
		images = append(images, section{name: ".cudbg.elfimg.dev0.0", typ: ShtElfImg, addralign: 8, data: s.Cubin})
	}
	return images, nil
}

// appendExtra appends the spec's extra sections, linked by name.
func appendExtra(secs []section, extra []RawSection) ([]section, error) {
	for _, x := range extra {
		link := -1
		for i, sec := range secs {
			if sec.name == x.Link {
				link = i + 1 // section 0 is the null section
			}
		}
		if x.Link != "" && link < 0 {
			return nil, fmt.Errorf("extra section %s: no section %s to link to", x.Name, x.Link)
		}
		secs = append(secs, section{name: x.Name, typ: x.Type, link: uint32(max(link, 0)), info: x.Info,
			entsize: x.Entsize, addr: x.Addr, size: x.Size, addralign: 8, data: x.Data})
	}
	return secs, nil
}

// writeELF lays out an ELF64 core (ELFOSABI_CUDA) with the given sections
// after a null section; section names go to the first section.
func writeELF(secs []section) []byte {
	var shstr []byte
	shstr = append(shstr, 0)
	names := make([]uint32, len(secs))
	for i, s := range secs {
		names[i] = uint32(len(shstr))
		shstr = append(shstr, s.name...)
		shstr = append(shstr, 0)
	}
	secs[0].data = shstr
	out := make([]byte, 64)
	offs := make([]uint64, len(secs))
	for i, s := range secs {
		for len(out)%8 != 0 {
			out = append(out, 0)
		}
		offs[i] = uint64(len(out))
		out = append(out, s.data...)
	}
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	shoff := uint64(len(out))
	out = append(out, make([]byte, 64*(len(secs)+1))...)
	for i, s := range secs {
		h := out[shoff+uint64(i+1)*64:]
		le.PutUint32(h[0:], names[i])
		le.PutUint32(h[4:], s.typ)
		le.PutUint64(h[16:], s.addr)
		le.PutUint64(h[24:], offs[i])
		size := uint64(len(s.data))
		if s.size != 0 {
			size = s.size
		}
		le.PutUint64(h[32:], size)
		le.PutUint32(h[40:], s.link)
		le.PutUint32(h[44:], s.info)
		le.PutUint64(h[48:], max(s.addralign, 1))
		le.PutUint64(h[56:], s.entsize)
	}
	copy(out, "\x7fELF")
	out[4], out[5], out[6], out[7], out[8] = 2, 1, 1, 0x33, 7 // ELF64, LSB, EV_CURRENT, ELFOSABI_CUDA, ABI 7
	le.PutUint16(out[16:], 4)                                 // ET_CORE
	le.PutUint16(out[18:], 190)                               // EM_CUDA
	le.PutUint32(out[20:], 1)
	le.PutUint64(out[40:], shoff)
	le.PutUint16(out[52:], 64)
	le.PutUint16(out[58:], 64)
	le.PutUint16(out[60:], uint16(len(secs)+1))
	le.PutUint16(out[62:], 1) // .shstrtab
	return out
}

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
