package cuda

import (
	"fmt"
	"sort"
	"sync"

	"github.com/faultline-dev/faultline/analysis/regular"
)

// Cubin is one NVIDIA GPU code object: an ELF64 image for EM_CUDA whose
// e_version carries the CUDA ABI version (0x70 and up), so debug/elf
// refuses it. It may be non-relocated, as nvcc and nvlink write it (every
// .text.KERNEL section starts at 0, line programs are relocated against
// symbols), or relocated, as the driver loads it and GPU core dumps save it
// (sections carry their device addresses).
type Cubin struct {
	elf      *elfFile
	arch     string // "sm_90"
	syms     []elfSymbol
	funcs    []Function           // sorted by section, then offset
	bySec    map[int][]int        // section index → indexes into funcs
	byName   map[string]int       // code section or function name → section index
	names    sync.Map             // raw name → demangled without parameters
	lines    map[int][]*placedSeq // section index → sequences, sorted by start
	debugStr []byte
	// Problems lists what could not be read: damaged line programs,
	// sequences that describe no section of this image.
	Problems []string
}

// Function is a function symbol of a cubin: a kernel (global, in its own
// .text section) or a noinline device function (often a local symbol
// inside the calling kernel's section, named "$kernel$mangled").
type Function struct {
	Name     string // the symbol name
	Section  string // ".text.kernel"
	Addr     uint64 // device address: section address + symbol value
	Offset   uint64 // offset within Section
	Size     uint64
	IsKernel bool // STO_CUDA_ENTRY
	secIndex int
}

// placedSeq is a line sequence placed in a section: row addresses made
// offsets from the section's start.
type placedSeq struct {
	table      *lineTable
	start, end uint64 // section offsets
	rows       []lineRow
	delta      uint64 // added to row addresses to make section offsets
}

// STO_CUDA_ENTRY marks kernels in st_other (cuobjdump prints it).
const stoCUDAEntry = 0x10

// maxCubinFile bounds a cubin file read whole (the largest kernels'
// images are tens of MiB).
const maxCubinFile = 1 << 30

// OpenCubin reads the cubin at path: a regular file (a FIFO or device is
// refused, never waited on) of at most maxCubinFile bytes.
func OpenCubin(path string) (*Cubin, error) {
	b, err := regular.ReadFile(path, maxCubinFile)
	if err != nil {
		return nil, err
	}
	c, err := ParseCubin(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// IsCubin says whether b starts like an EM_CUDA ELF image.
func IsCubin(b []byte) bool {
	return len(b) >= 20 && string(b[:4]) == "\x7fELF" && le.Uint16(b[18:]) == emCUDA
}

// ParseCubin reads a cubin from memory; the Cubin keeps b.
func ParseCubin(b []byte) (*Cubin, error) {
	f, err := parseELF(b)
	if err != nil {
		return nil, err
	}
	if f.machine != emCUDA {
		return nil, formatErr("ELF header", 0, "e_machine %d is not EM_CUDA (%d)", f.machine, emCUDA)
	}
	c := &Cubin{elf: f, lines: map[int][]*placedSeq{}}
	c.arch = archFromFlags(f)
	if c.syms, err = f.symbols(); err != nil {
		c.Problems = append(c.Problems, "symbols: "+err.Error())
	}
	c.collectFunctions()
	c.indexNames()
	if s := f.section(".debug_str"); s != nil {
		c.debugStr, _ = f.sectionData(s)
	}
	if s := f.section(".debug_line"); s != nil {
		data, err := f.sectionData(s)
		if err != nil {
			c.Problems = append(c.Problems, err.Error())
		} else {
			tables, err := parseLineTables(data)
			if err != nil {
				c.Problems = append(c.Problems, err.Error())
			}
			c.repairNameBases(tables)
			c.placeSequences(s, tables)
		}
	}
	return c, nil
}

// Arch is the SM architecture the cubin was built for, e.g. "sm_90".
func (c *Cubin) Arch() string { return c.arch }

// HasLineInfo says whether the cubin carries a line table (-lineinfo or -G).
func (c *Cubin) HasLineInfo() bool { return len(c.lines) > 0 }

// Relocated says whether code sections carry device addresses.
func (c *Cubin) Relocated() bool {
	for i := range c.elf.sections {
		s := &c.elf.sections[i]
		if s.Flags&shfExecInstr != 0 && s.Addr != 0 {
			return true
		}
	}
	return false
}

// Functions lists the function symbols, kernels and device functions.
func (c *Cubin) Functions() []Function { return c.funcs }

// archFromFlags reads the SM version from e_flags. The EF_CUDA_SM field
// moved from bits 0-7 (ABI version < 8, CUDA ≤ 12.x) to bits 8-15 (ABI 8);
// cuobjdump prints both as EF_CUDA_SMxx.
func archFromFlags(f *elfFile) string {
	sm := f.flags & 0xff
	if f.abiVer >= 8 {
		sm = (f.flags >> 8) & 0xff
	}
	if sm == 0 {
		return ""
	}
	return fmt.Sprintf("sm_%d", sm)
}

func (c *Cubin) collectFunctions() {
	for i := range c.syms {
		s := &c.syms[i]
		if s.kind() != sttFunc || s.section <= 0 || s.section >= len(c.elf.sections) {
			continue
		}
		sec := &c.elf.sections[s.section]
		if sec.Flags&shfExecInstr == 0 {
			continue
		}
		off := s.Value
		if sec.Addr != 0 && s.Value >= sec.Addr { // relocated: symbol values are addresses
			off = s.Value - sec.Addr
		}
		c.funcs = append(c.funcs, Function{Name: s.Name, Section: sec.Name, Addr: sec.Addr + off, Offset: off,
			Size: s.Size, IsKernel: s.Other&stoCUDAEntry != 0, secIndex: s.section})
	}
	sort.SliceStable(c.funcs, func(i, j int) bool {
		a, b := &c.funcs[i], &c.funcs[j]
		if a.secIndex != b.secIndex {
			return a.secIndex < b.secIndex
		}
		return a.Offset < b.Offset
	})
	c.bySec = map[int][]int{}
	for i := range c.funcs {
		c.bySec[c.funcs[i].secIndex] = append(c.bySec[c.funcs[i].secIndex], i)
	}
}

// relocTarget is where a relocation in .debug_line points.
type relocTarget struct {
	section int
	symbol  uint64 // the symbol's value
	addend  uint64 // RELA only; REL keeps the addend in the patched bytes
	rela    bool
}

// debugLineRelocs reads the SHT_REL/SHT_RELA sections that apply to
// .debug_line, keyed by the offset they patch.
func (c *Cubin) debugLineRelocs(target *elfSection) map[uint64]relocTarget {
	const shtRela, shtRel = 4, 9
	out := map[uint64]relocTarget{}
	for i := range c.elf.sections {
		s := &c.elf.sections[i]
		if (s.Type != shtRel && s.Type != shtRela) || int(s.Info) != target.index {
			continue
		}
		data, err := c.elf.sectionData(s)
		if err != nil {
			c.Problems = append(c.Problems, err.Error())
			continue
		}
		ent := uint64(16)
		if s.Type == shtRela {
			ent = 24
		}
		for o := uint64(0); o+ent <= uint64(len(data)); o += ent {
			off := le.Uint64(data[o:])
			sym := le.Uint64(data[o+8:]) >> 32
			var addend uint64
			if s.Type == shtRela {
				addend = le.Uint64(data[o+16:])
			}
			if sym == 0 || sym > uint64(len(c.syms)) {
				continue
			}
			es := &c.syms[sym-1] // syms skips the null symbol
			if es.section <= 0 || es.section >= len(c.elf.sections) {
				continue
			}
			out[off] = relocTarget{section: es.section, symbol: es.Value, addend: addend, rela: s.Type == shtRela}
		}
	}
	return out
}

// placeSequences assigns each line sequence to the code section it
// describes: through the relocation of its DW_LNE_set_address in a
// non-relocated image, through its address in a relocated one. A sequence
// neither places (nvlink leaves those behind for functions it dropped, all
// at address 0) is an orphan: it describes no code here and is skipped.
func (c *Cubin) placeSequences(debugLine *elfSection, tables []*lineTable) {
	relocs := c.debugLineRelocs(debugLine)
	relocated := c.Relocated()
	orphans := 0
	for _, t := range tables {
		for si := range t.sequences {
			seq := &t.sequences[si]
			if len(seq.rows) == 0 {
				continue
			}
			var sec int
			var delta uint64
			if rt, ok := relocs[seq.addrOffset]; ok {
				// S + A. With REL the operand is the addend, so row
				// addresses are already relative to the symbol; with
				// RELA the operand is replaced by S + A.
				sec, delta = rt.section, rt.symbol
				if rt.rela {
					delta += rt.addend - seq.start
				}
				if s := &c.elf.sections[sec]; s.Addr != 0 && rt.symbol >= s.Addr {
					delta -= s.Addr
				}
			} else if relocated {
				sec = c.sectionAt(seq.start)
				if sec < 0 {
					orphans++
					continue
				}
				delta = -c.elf.sections[sec].Addr
			} else {
				orphans++
				continue
			}
			ps := &placedSeq{table: t, rows: seq.rows, delta: delta, start: seq.start + delta, end: seq.end + delta}
			c.lines[sec] = append(c.lines[sec], ps)
		}
	}
	for sec, seqs := range c.lines {
		sort.SliceStable(seqs, func(i, j int) bool { return seqs[i].start < seqs[j].start })
		c.lines[sec] = seqs
	}
	if orphans > 0 {
		c.Problems = append(c.Problems, fmt.Sprintf("%d line sequence(s) describe no code section of this image (left over by the linker)", orphans))
	}
}

// sectionAt returns the index of the code section holding device address
// a, or -1.
func (c *Cubin) sectionAt(a uint64) int {
	for i := range c.elf.sections {
		s := &c.elf.sections[i]
		if s.Flags&shfExecInstr != 0 && s.Addr <= a && a-s.Addr < max(s.Size, 1) {
			return i
		}
	}
	return -1
}

// textSection returns the code section called name, or the .text.NAME
// section of a kernel called name.
func (c *Cubin) textSection(name string) int {
	if i, ok := c.byName[name]; ok {
		return i
	}
	if i, ok := c.byName[".text."+name]; ok {
		return i
	}
	return -1
}

// indexNames maps code section names, and function names to their
// sections (device functions in -rdc builds have their own sections; a
// noinline helper's symbol names the kernel section it sits in).
func (c *Cubin) indexNames() {
	c.byName = map[string]int{}
	for i := range c.elf.sections {
		if s := &c.elf.sections[i]; s.Flags&shfExecInstr != 0 {
			c.byName[s.Name] = i
		}
	}
	for _, f := range c.funcs {
		if _, ok := c.byName[f.Name]; !ok {
			c.byName[f.Name] = f.secIndex
		}
	}
}

// CodeSection is one code section of a cubin.
type CodeSection struct {
	Index int    // ELF section index, for LookupOffset
	Name  string // ".text.KERNEL"
	Addr  uint64 // device address (0 when not relocated)
	Size  uint64
}

// CodeSections lists the code sections.
func (c *Cubin) CodeSections() []CodeSection {
	var out []CodeSection
	for i := range c.elf.sections {
		if s := &c.elf.sections[i]; s.Flags&shfExecInstr != 0 && s.Type != shtNobits {
			out = append(out, CodeSection{Index: i, Name: s.Name, Addr: s.Addr, Size: s.Size})
		}
	}
	return out
}

// enclosingFunction returns the smallest function symbol containing off
// in section sec, or nil.
func (c *Cubin) enclosingFunction(sec int, off uint64) *Function {
	var best *Function
	for _, i := range c.bySec[sec] {
		f := &c.funcs[i]
		if off < f.Offset {
			break // sorted by offset
		}
		size := f.Size
		if size == 0 {
			size = c.elf.sections[sec].Size - f.Offset
		}
		if off-f.Offset >= size {
			continue
		}
		if best == nil || size < best.Size || best.Size == 0 {
			best = f
		}
	}
	return best
}

// demangle is DemangleNoParams, cached: inline chains repeat names.
func (c *Cubin) demangle(name string) string {
	if v, ok := c.names.Load(name); ok {
		return v.(string)
	}
	d := DemangleNoParams(name)
	c.names.Store(name, d)
	return d
}

// debugString returns the .debug_str string at off.
func (c *Cubin) debugString(off uint64) string { return cString(c.debugStr, off) }
