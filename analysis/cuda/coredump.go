package cuda

import (
	"errors"
	"fmt"
)

// GPU core dump layout: NVIDIA's public cudacoredump.h (cuda-gdb's
// libcudacore). A dump is an ELF64 image (e_ident OSABI ELFOSABI_CUDA,
// e_type ET_CORE) whose sections are tables of fixed-size rows; a table's
// sh_link names its parent table's section and sh_info the parent row, so
// one warp table holds the warps of one CTA, one lane table the lanes of
// one warp. Drivers append fields to rows over time: rows are stepped by
// sh_entsize and fields past a row's end read as zero.
const (
	elfOSABICUDA = 0x33
	etCore       = 4

	shtLoUser   = 0x80000000
	shtElfImg   = shtLoUser + 6  // CUDBG_SHT_ELF_IMG: a cubin as loaded (not relocated)
	shtRelfImg  = shtLoUser + 7  // CUDBG_SHT_RELF_IMG: the relocated cubin
	shtDevTable = shtLoUser + 9  // CUDBG_SHT_DEV_TABLE
	shtCtxTable = shtLoUser + 10 // CUDBG_SHT_CTX_TABLE
	shtSMTable  = shtLoUser + 11 // CUDBG_SHT_SM_TABLE
	shtGridTbl  = shtLoUser + 12 // CUDBG_SHT_GRID_TABLE
	shtCTATable = shtLoUser + 13 // CUDBG_SHT_CTA_TABLE
	shtWPTable  = shtLoUser + 14 // CUDBG_SHT_WP_TABLE
	shtLNTable  = shtLoUser + 15 // CUDBG_SHT_LN_TABLE
	shtModTable = shtLoUser + 16 // CUDBG_SHT_MOD_TABLE

	// Row sizes of the 2015 layout (the smallest a reader must accept).
	devRowSize  = 72  // CudbgDeviceTableEntry
	ctxRowSize  = 40  // CudbgContextTableEntry
	gridRowSize = 104 // CudbgGridTableEntry
	smRowSize   = 8   // CudbgSmTableEntry
	ctaRowSize  = 24  // CudbgCTATableEntry
	warpRowSize = 32  // CudbgWarpTableEntry
	laneRowSize = 48  // CudbgThreadTableEntry
	modRowSize  = 8   // CudbgModuleTableEntry

	// Bytes read of rows that grew fields after 2015 (a shorter row reads
	// them as zero): the device row's uniform register and predicate
	// counts (r400), the SM row's exception and errorPC (r555).
	devReadSize = 80
	smReadSize  = 24

	// maxRows bounds one table; a GPU has at most a few hundred SMs of 64
	// warps of 32 lanes.
	maxRows = 1 << 22
	// maxDumpBytes bounds the dumps ReadCrash reads into memory.
	maxDumpBytes = 8 << 30
)

// CoreDump is a GPU core dump: the devices, the grids (kernel launches)
// running on them, and the state of every resident warp and lane.
type CoreDump struct {
	Path     string
	Devices  []Device
	Contexts []Context
	Grids    []Grid
	// SMs are the rows of the SM tables, device by device, in table order.
	SMs   []SM
	Warps []Warp
	// Images are the cubins the dump saved: relocated ones (as loaded on
	// the device, with device addresses) and, unless the driver was told
	// skip_nonrelocated_elf_images, the originals.
	Images []Image
	// Problems lists tables or images that could not be read.
	Problems []string

	f *elfFile // for the register leaves, read when asked for
	// laneLeaves says some lane has a per-lane leaf: then only such lanes
	// are threads (see Threads).
	laneLeaves bool
}

// Device is one row of the device table.
type Device struct {
	Index                   int
	Name, Type, SMType      string // "NVIDIA H100 80GB HBM3", "GH100", "sm_90"
	ID                      uint32
	PCIBusID, PCIDevID      uint32
	NumSMs, WarpsPerSM      uint32
	LanesPerWarp            uint32
	RegsPerLane             uint32
	PredicatesPerLane       uint32
	SMMajor, SMMinor        uint32
	InstructionSize, Status uint32
	// UniformRegsPerWarp and UniformPredicatesPerWarp are 0 in rows
	// written before driver r400.
	UniformRegsPerWarp       uint32
	UniformPredicatesPerWarp uint32
}

// Context is one row of a context table.
type Context struct {
	ID      uint64
	Device  uint32
	HostTID uint32
	Modules []uint64 // module handles of the context's module table
}

// Grid is one kernel launch (a row of a device's grid table).
type Grid struct {
	Device        int // device row
	ID            uint64
	ContextID     uint64
	Function      uint64 // entry of the kernel function (device address)
	FunctionEntry uint64
	ModuleHandle  uint64
	ParentGridID  uint64
	GridDim       [3]uint32
	BlockDim      [3]uint32
	Status        uint32
	NumRegs       uint32
	// HostTID is the host thread that launched the grid (attrHostTid): the
	// thread to look at in a CPU core taken with the GPU dump.
	HostTID uint32
}

// SM is one row of a device's SM table. Since driver r555 it records the
// exception of any of its warps and that warp's errorPC, which survive
// the warps: a kernel that faulted and ran to completion before the dump
// was written leaves only this row to name the fault.
type SM struct {
	Device       int
	ID           uint32 // smId
	Exception    Exception
	ErrorPC      uint64
	ErrorPCValid bool
}

// Warp is a resident warp with its lanes.
type Warp struct {
	Device       int
	SMIndex      int    // index of its SM in CoreDump.SMs
	SM           uint32 // smId
	GridID       uint64
	Block        [3]uint32
	WarpID       uint32
	ErrorPC      uint64
	ErrorPCValid bool
	ValidLanes   uint32
	ActiveLanes  uint32
	Broken       bool
	Lanes        []Lane

	uregs, upreds int // section index of the uniform register/predicate leaf + 1
}

// Lane is one row of a warp's lane table.
type Lane struct {
	Row       int    // the row in the lane table: the index the warp's lane masks use
	Lane      uint32 // ln
	Thread    [3]uint32
	PC        uint64 // virtual PC
	Exception Exception
	CallDepth uint32

	leaf        bool // a per-lane leaf (registers, predicates, local memory, call stack) hangs below the row
	regs, preds int  // section index of the register/predicate leaf + 1
}

// Image is one ELF image saved in the dump.
type Image struct {
	Section   string
	Relocated bool
	Cubin     *Cubin // nil when it could not be parsed
}

// Exception is a CUDBGException_t (cudadebugger.h).
type Exception uint32

var exceptionNames = map[Exception]string{
	0:  "None",
	1:  "Lane Illegal Address",
	2:  "Lane User Stack Overflow",
	3:  "Device Hardware Stack Overflow",
	4:  "Warp Illegal Instruction",
	5:  "Warp Out-of-range Address",
	6:  "Warp Misaligned Address",
	7:  "Warp Invalid Address Space",
	8:  "Warp Invalid PC",
	9:  "Warp Hardware Stack Overflow",
	10: "Device Illegal Address",
	11: "Lane Misaligned Address",
	12: "Warp Assert",
	13: "Lane Syscall Error",
	14: "Warp Illegal Address",
	15: "Lane Nonmigratable Atomsys",
	16: "Lane Invalid Atomsys",
	17: "Cluster Out-of-range Address",
	18: "Cluster Block Not Present",
	// Codes of newer drivers (cudadebugger.h of CUDA 13), named as LLDB's
	// CUDAExceptionToString names them.
	19: "Warp Stack Canary",
	20: "Warp Tensor Memory Access Check",
	21: "Warp Tensor Memory Leak",
	22: "Warp Call Requires Newer Driver",
	23: "Warp Misaligned PC",
	24: "Warp PC Overflow",
	25: "Warp Misaligned Register",
	26: "Warp Illegal Instruction Encoding",
	27: "Warp Illegal Instruction Parameter",
	28: "Warp Out-of-range Register",
	29: "Warp Invalid Constant Address",
	30: "Warp MMU Fault",
	31: "Warp Barrier Arrival Mismatch",
	32: "Cluster Shared Memory Issue",
	33: "Warp API Stack Error",
	34: "Warp Block Not Present",
	35: "Warp User Stack Overflow",
}

// String is the name cuda-gdb prints after "CUDA Exception: ".
func (e Exception) String() string {
	if e == 0xffffffff {
		return "Unknown Exception"
	}
	if s, ok := exceptionNames[e]; ok {
		return s
	}
	return fmt.Sprintf("Exception %d", uint32(e))
}

// IsCoreHeader says whether h, the first bytes of a (decompressed) file,
// start a GPU core dump: an ELF core with ELFOSABI_CUDA.
func IsCoreHeader(h []byte) bool {
	return len(h) >= 18 && string(h[:4]) == "\x7fELF" && h[7] == elfOSABICUDA && le.Uint16(h[16:]) == etCore
}

// ParseCoreDump reads a GPU core dump from memory.
func ParseCoreDump(data []byte) (*CoreDump, error) {
	f, err := parseELF(data)
	if err != nil {
		return nil, err
	}
	if f.osABI != elfOSABICUDA || f.typ != etCore {
		return nil, errors.New("not a GPU core dump (want an ELF core with OSABI ELFOSABI_CUDA)")
	}
	d := &CoreDump{f: f}
	p := &dumpParser{f: f, d: d, smIndex: map[[2]int]int{}, ctaOf: map[[2]int]ctaKey{}, rowBudget: len(data)}
	p.strtab = p.stringTable()
	if err := p.checkHierarchy(); err != nil {
		return nil, err
	}
	p.readDevices()
	if len(d.Devices) == 0 {
		return nil, errors.New("GPU core dump has no device table (.cudbg.devtbl)")
	}
	p.readContexts()
	p.readGrids()
	p.readSMs()
	p.readWarps()
	p.readImages()
	return d, nil
}

// dumpParser holds what linking the tables needs.
type dumpParser struct {
	f      *elfFile
	d      *CoreDump
	strtab []byte
	// smIndex maps (SM table section, row) to the SM's index in
	// CoreDump.SMs; the device of an SM table is its sh_info.
	smIndex map[[2]int]int
	// ctaOf maps (CTA table section, row) to its CTA.
	ctaOf map[[2]int]ctaKey
	// rowBudget is how many bytes of table rows are still to be read: the
	// file's size at first.
	rowBudget int
}

type ctaKey struct {
	sm    int // index in CoreDump.SMs
	grid  uint64
	block [3]uint32
}

func (p *dumpParser) problem(format string, args ...any) {
	p.d.Problems = append(p.d.Problems, fmt.Sprintf(format, args...))
}

func (p *dumpParser) stringTable() []byte {
	for i := range p.f.sections {
		s := &p.f.sections[i]
		if s.Type == shtStrtab && s.Name == ".strtab" {
			b, _ := p.f.sectionData(s)
			return b
		}
	}
	for i := range p.f.sections {
		if s := &p.f.sections[i]; s.Type == shtStrtab {
			b, _ := p.f.sectionData(s)
			return b
		}
	}
	return nil
}

// table is one table section read as rows of at least min bytes (the 2015
// layout; sh_entsize 0 means that size); row pads rows to read bytes.
type table struct {
	sec  *elfSection
	data []byte
	ent  int
	n    int
	min  int
	read int
}

// minRowSizes are the smallest sh_entsize a table may have: the 2015 row
// size, less the fields appended to it later (the grid row's host TID,
// the lane row's last word). A smaller row is no layout a driver wrote; it
// would turn each byte of the file into a row.
var minRowSizes = map[uint32]int{
	shtDevTable: devRowSize, shtCtxTable: ctxRowSize, shtGridTbl: gridRowSize - 8, shtSMTable: smRowSize,
	shtCTATable: ctaRowSize, shtWPTable: warpRowSize, shtLNTable: laneRowSize - 8, shtModTable: modRowSize,
}

// tables returns the sections of type typ as tables of rows of at least
// minSize bytes, read as readSize bytes (fields past a row's end are
// zero). Rows are charged to the dump's row budget (the file's size):
// section headers that name the same bytes many times do not multiply
// them.
func (p *dumpParser) tables(typ uint32, minSize, readSize int) []table {
	var out []table
	for i := range p.f.sections {
		s := &p.f.sections[i]
		if s.Type != typ {
			continue
		}
		data, err := p.f.sectionData(s)
		if err != nil {
			p.problem("%v", err)
			continue
		}
		ent := int(min(s.Entsize, 1<<17))
		if ent == 0 {
			ent = minSize // some writers leave sh_entsize 0: the 2015 size
		}
		if least := minRowSizes[typ]; ent < least {
			p.problem("section %s: row size %d is smaller than a %s row (%d bytes)", s.Name, ent, typeName(typ), least)
			continue
		}
		if ent > 1<<16 {
			p.problem("section %s: row size %d is implausible", s.Name, ent)
			continue
		}
		if n := p.chargeRows(s, len(data)/ent, ent); n > 0 {
			out = append(out, table{sec: s, data: data, ent: ent, n: n, min: minSize, read: max(minSize, readSize)})
		}
	}
	return out
}

// chargeRows takes n rows of ent bytes of section s from the row budget
// and returns how many fit.
func (p *dumpParser) chargeRows(s *elfSection, n, ent int) int {
	if n > maxRows {
		p.problem("section %s: %d rows, reading the first %d", s.Name, n, maxRows)
		n = maxRows
	}
	if fit := p.rowBudget / ent; n > fit {
		p.problem("section %s: %d rows, reading %d: the tables name more rows than the file holds (overlapping sections)", s.Name, n, fit)
		n = fit
	}
	p.rowBudget -= n * ent
	return n
}

// row returns row i padded with zeros to the bytes read: fields a shorter
// (older) row lacks read as zero, fields a longer (newer) row adds past
// them are ignored.
func (t *table) row(i int) []byte {
	r := t.data[i*t.ent : (i+1)*t.ent]
	if len(r) >= t.read {
		return r
	}
	pad := make([]byte, t.read)
	copy(pad, r)
	return pad
}

func (p *dumpParser) str(off uint64) string { return cString(p.strtab, off) }

func (p *dumpParser) readDevices() {
	for _, t := range p.tables(shtDevTable, devRowSize, devReadSize) {
		for i := 0; i < t.n; i++ {
			r := t.row(i)
			p.d.Devices = append(p.d.Devices, Device{
				Index:  len(p.d.Devices),
				Name:   p.str(le.Uint64(r[0:])),
				Type:   p.str(le.Uint64(r[8:])),
				SMType: p.str(le.Uint64(r[16:])),
				ID:     le.Uint32(r[24:]), PCIBusID: le.Uint32(r[28:]), PCIDevID: le.Uint32(r[32:]),
				NumSMs: le.Uint32(r[36:]), WarpsPerSM: le.Uint32(r[40:]), LanesPerWarp: le.Uint32(r[44:]),
				RegsPerLane: le.Uint32(r[48:]), PredicatesPerLane: le.Uint32(r[52:]),
				SMMajor: le.Uint32(r[56:]), SMMinor: le.Uint32(r[60:]),
				InstructionSize: le.Uint32(r[64:]), Status: le.Uint32(r[68:]),
				UniformRegsPerWarp: le.Uint32(r[72:]), UniformPredicatesPerWarp: le.Uint32(r[76:]),
			})
		}
	}
}

func (p *dumpParser) readContexts() {
	ctxRows := map[[2]int]int{} // (section, row) → index in Contexts
	for _, t := range p.tables(shtCtxTable, ctxRowSize, 0) {
		for i := 0; i < t.n; i++ {
			r := t.row(i)
			ctxRows[[2]int{t.sec.index, i}] = len(p.d.Contexts)
			p.d.Contexts = append(p.d.Contexts, Context{ID: le.Uint64(r[0:]), Device: le.Uint32(r[32:]), HostTID: le.Uint32(r[36:])})
		}
	}
	for _, t := range p.tables(shtModTable, modRowSize, 0) {
		ci, ok := ctxRows[[2]int{int(t.sec.Link), int(t.sec.Info)}]
		if !ok {
			p.problem("module table %s: no context row %d in section %d", t.sec.Name, t.sec.Info, t.sec.Link)
			continue
		}
		for i := 0; i < t.n; i++ {
			p.d.Contexts[ci].Modules = append(p.d.Contexts[ci].Modules, le.Uint64(t.row(i)))
		}
	}
}

func (p *dumpParser) readGrids() {
	for _, t := range p.tables(shtGridTbl, gridRowSize, 0) {
		dev := int(t.sec.Info)
		if dev >= len(p.d.Devices) {
			p.problem("grid table %s: no device row %d", t.sec.Name, dev)
			continue
		}
		for i := 0; i < t.n; i++ {
			r := t.row(i)
			p.d.Grids = append(p.d.Grids, Grid{
				Device: dev, ID: le.Uint64(r[0:]), ContextID: le.Uint64(r[8:]), Function: le.Uint64(r[16:]),
				FunctionEntry: le.Uint64(r[24:]), ModuleHandle: le.Uint64(r[32:]), ParentGridID: le.Uint64(r[40:]),
				Status: le.Uint32(r[64:]), NumRegs: le.Uint32(r[68:]),
				GridDim:  [3]uint32{le.Uint32(r[72:]), le.Uint32(r[76:]), le.Uint32(r[80:])},
				BlockDim: [3]uint32{le.Uint32(r[84:]), le.Uint32(r[88:]), le.Uint32(r[92:])},
				HostTID:  le.Uint32(r[100:]),
			})
		}
	}
}

func (p *dumpParser) readImages() {
	for i := range p.f.sections {
		s := &p.f.sections[i]
		if s.Type != shtElfImg && s.Type != shtRelfImg {
			continue
		}
		img := Image{Section: s.Name, Relocated: s.Type == shtRelfImg}
		data, err := p.f.sectionData(s)
		if err == nil {
			img.Cubin, err = ParseCubin(data)
		}
		if err != nil {
			p.problem("ELF image %s: %v", s.Name, err)
		}
		p.d.Images = append(p.d.Images, img)
	}
}

// Grid returns the grid with id on device dev, or nil.
func (d *CoreDump) Grid(dev int, id uint64) *Grid {
	for i := range d.Grids {
		if g := &d.Grids[i]; g.Device == dev && g.ID == id {
			return g
		}
	}
	return nil
}

// Lookup resolves a device address against the relocated images.
func (d *CoreDump) Lookup(pc uint64) (Location, *Image, error) {
	for i := range d.Images {
		img := &d.Images[i]
		if img.Cubin == nil || !img.Relocated {
			continue
		}
		if img.Cubin.sectionAt(pc) < 0 {
			continue
		}
		loc, err := img.Cubin.LookupAddress(pc)
		return loc, img, err
	}
	relocated := 0
	for i := range d.Images {
		if d.Images[i].Relocated {
			relocated++
		}
	}
	switch {
	case len(d.Images) == 0:
		return Location{}, nil, fmt.Errorf("the dump holds no code image (cubin), so %#x has no function or line: "+
			"the exception and the thread stand, the device frames are lost", pc)
	case relocated == 0:
		return Location{}, nil, fmt.Errorf("the dump holds no relocated code image, so %#x has no function or line "+
			"(an unrelocated cubin has no device addresses)", pc)
	}
	return Location{}, nil, fmt.Errorf("no relocated ELF image in the dump holds %#x", pc)
}
