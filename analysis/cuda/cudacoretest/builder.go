// Package cudacoretest builds synthetic NVIDIA GPU core dumps for tests:
// ELF images laid out as NVIDIA's public cudacoredump.h describes them
// (cuda-gdb's libcudacore), with real cubins inside, relocated the way the
// driver loads them. Row sizes are configurable, so readers can be tested
// against the layouts of several driver versions.
package cudacoretest

import (
	"encoding/binary"
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

// RowSizes are the sh_entsize values to write; zero means the 2015 size
// for a Spec, the current size for a Core. Sizes past the current layout
// model newer drivers: the extra bytes are 0xA5 so a reader that reads
// them shows it. Smaller sizes model rows written before a field existed.
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
	ShtCBTable   = shtLoUser + 21 // r550
	ShtMetaData  = shtLoUser + 22 // r565
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

// Build writes the dump described by s: rows of the 2015 layout unless
// s.Rows says otherwise, both warps' lanes with a small register leaf
// each (real dumps carry every valid lane's registers).
func Build(s Spec) ([]byte, error) {
	c, err := s.core()
	if err != nil {
		return nil, err
	}
	return c.Build()
}

// core is s as a Core.
func (s Spec) core() (*Core, error) {
	mod := &Module{Handle: 0x5000}
	dev := &Device{Name: s.DeviceName, Type: s.DeviceType, SMType: s.SMType, SMMajor: s.SMMajor, SMMinor: s.SMMinor,
		NumSMs: s.NumSMs, WarpsPerSM: 64, LanesPerWarp: 32, PCIBusID: 0x1b, RegsPerLane: 255, PredicatesPerLane: 7,
		InstructionSize: 16,
		Contexts:        []*Context{{ID: s.ContextID, HostTID: s.HostTID, Modules: []*Module{mod}}}}
	if !s.NoGrid {
		dev.Grids = []*Grid{{ID: s.GridID, ContextID: s.ContextID, FunctionEntry: s.KernelEntry, ModuleHandle: mod.Handle,
			GridDim: s.GridDim, BlockDim: s.BlockDim, Kind: 1, Status: 3, NumRegs: 32, HostTID: s.HostTID}}
	}
	faulting := &Warp{ID: s.WarpID, Valid: 0xffffffff, Active: 0xffffffff, ErrorPC: s.ErrorPC, ErrorPCValid: s.Exception != 0}
	next := &Warp{ID: s.WarpID + 1, Valid: 0xffffffff, Active: 0xffffffff}
	for l := uint32(0); l < 32; l++ {
		tid := [3]uint32{s.Thread[0] - s.Lane + l, s.Thread[1], s.Thread[2]}
		lane := &Lane{ID: l, Thread: tid, PC: s.PC, Regs: []uint32{l, tid[0], 0, 0}}
		if l == s.Lane && s.Exception != 0 {
			lane.Exception, lane.PC = s.Exception, s.ErrorPC
		}
		faulting.Lanes = append(faulting.Lanes, lane)
		tid[0] += 32
		next.Lanes = append(next.Lanes, &Lane{ID: l, Thread: tid, PC: s.PC, Regs: []uint32{l, tid[0], 0, 0}})
	}
	dev.SMs = []*SM{{ID: s.SM, CTAs: []*CTA{{GridID: s.GridID, Block: s.Block, Warps: []*Warp{faulting, next}}}}}
	c := &Core{Rows: s.Rows.or2015(), Devices: []*Device{dev}, Raw: s.Extra}
	if s.Cubin != nil {
		rel, err := RelocateCubin(s.Cubin, s.Base)
		if err != nil {
			return nil, err
		}
		c.Images = []Image{{Name: ".cudbg.relfimg.dev0.0", Data: rel, Relocated: true}}
		if !s.SkipNonRelocated {
			c.Images = append(c.Images, Image{Name: ".cudbg.elfimg.dev0.0", Data: s.Cubin})
		}
	}
	return c, nil
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
