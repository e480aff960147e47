package cudacoretest

import "fmt"

// Core is a GPU core dump described as the tree cudacoredump.h lays out:
// devices with their contexts (and modules), grids and SMs; SMs with
// CTAs, CTAs with warps, warps with lanes; lanes and warps with their
// register and predicate leaves; global memory, cubins and metadata at
// the root. Build writes it with each table linked to its parent table
// (sh_link) and row (sh_info), as the header's "Section link" and
// "Section info" lines say.
type Core struct {
	// Rows are the row sizes written; zero means the current (r575) size.
	Rows    RowSizes
	Devices []*Device
	Global  []Memory
	// Images are cubins: relocated (as loaded, with device addresses; see
	// RelocateCubin) or not, at the root or below a module's row.
	Images []Image
	// Metadata writes the r565 metadata row (driver r580, CUDA 12.9).
	Metadata bool
	// Raw sections are appended as given, linked by name: malformed
	// tables and leaves for the reader's rejection paths.
	Raw []RawSection
}

// Device is a row of the device table.
type Device struct {
	Name, Type, SMType                 string
	SMMajor, SMMinor, NumSMs           uint32
	WarpsPerSM, LanesPerWarp, PCIBusID uint32
	RegsPerLane, PredicatesPerLane     uint32
	UniformRegs, UniformPredicates     uint32
	InstructionSize                    uint32
	Contexts                           []*Context
	Grids                              []*Grid
	SMs                                []*SM
	EmptyGridTable                     bool // write a grid table without rows when Grids is empty
}

// Context is a row of a device's context table.
type Context struct {
	ID      uint64
	HostTID uint32
	Modules []*Module
}

// Module is a row of a context's module table.
type Module struct{ Handle uint64 }

// Grid is a row of a device's grid table.
type Grid struct {
	ID, ContextID, FunctionEntry, ModuleHandle uint64
	GridDim, BlockDim                          [3]uint32
	Kind, Status, NumRegs, HostTID             uint32
}

// SM is a row of a device's SM table. Exception and ErrorPC are the r555
// fields: the fault of a warp that may have exited since.
type SM struct {
	ID           uint32
	Exception    uint32
	ErrorPC      uint64
	ErrorPCValid bool
	CTAs         []*CTA
	// EmptyCTATable writes a CTA table without rows when CTAs is empty
	// (a real dump written after the kernel's blocks exited).
	EmptyCTATable bool
}

// CTA is a row of an SM's CTA table.
type CTA struct {
	GridID uint64
	Block  [3]uint32
	Warps  []*Warp
}

// Warp is a row of a CTA's warp table.
type Warp struct {
	ID            uint32
	Valid, Active uint32 // lane masks
	ErrorPC       uint64
	ErrorPCValid  bool
	Broken        bool
	// Lanes are written at the row of their ID; rows between them are
	// zero.
	Lanes         []*Lane
	URegs, UPreds []uint32 // uniform register and predicate leaves (nil: none)
}

// Lane is a row of a warp's lane table.
type Lane struct {
	ID        uint32 // the row and ln
	Thread    [3]uint32
	PC        uint64
	Exception uint32
	CallDepth uint32
	// Regs and Preds are the lane's register and predicate leaves (nil:
	// none; a lane without any per-lane leaf is no thread to LLDB).
	Regs, Preds []uint32
}

// Memory is a global memory section.
type Memory struct {
	Addr uint64
	Data []byte
}

// Image is a cubin saved in the dump.
type Image struct {
	Name      string // default .cudbg.relfimg.N / .cudbg.elfimg.N
	Data      []byte
	Relocated bool
	Module    *Module // nil: at the root (sh_link 0)
}

// emitter collects the sections of a Core being built.
type emitter struct {
	rows    RowSizes
	secs    []section
	str     strtab
	modules map[*Module][2]uint32 // module table section, row
}

// add appends s and returns its section index (section 0 is null).
func (e *emitter) add(s section) uint32 {
	if s.addralign == 0 {
		s.addralign = 8
	}
	e.secs = append(e.secs, s)
	return uint32(len(e.secs))
}

// Build writes the dump.
func (c *Core) Build() ([]byte, error) {
	e := &emitter{rows: c.Rows.orCurrent(), modules: map[*Module][2]uint32{}}
	e.str.b = []byte{0}
	e.add(section{name: ".shstrtab", typ: 3})
	strIdx := e.add(section{name: ".strtab", typ: 3})
	if c.Metadata {
		e.add(section{name: ".cudbg.meta", typ: ShtMetaData, entsize: metaRowSize,
			data: row(metaRowSize, metaRowSize, u32(metaDriverMajor, 580), u32(metaCUDAMajor, 12), u32(metaCUDAMinor, 9))})
	}
	var devRows []byte
	for _, d := range c.Devices {
		devRows = append(devRows, e.deviceRow(d, len(devRows)/e.rows.Device)...)
	}
	if len(c.Devices) > 0 {
		devtbl := e.add(section{name: ".cudbg.devtbl", typ: ShtDevTable, entsize: uint64(e.rows.Device), data: devRows})
		for di, d := range c.Devices {
			e.device(d, uint32(di), devtbl)
		}
	}
	for i, m := range c.Global {
		e.add(section{name: fmt.Sprintf(".cudbg.global.%d", i), typ: ShtGlobalMem, addr: m.Addr, data: m.Data})
	}
	if err := e.images(c.Images); err != nil {
		return nil, err
	}
	e.secs[strIdx-1].data = e.str.b
	secs, err := appendExtra(e.secs, c.Raw)
	if err != nil {
		return nil, err
	}
	return writeELF(secs), nil
}

func (e *emitter) deviceRow(d *Device, idx int) []byte {
	return row(e.rows.Device, Current.Device,
		u64(devName, e.str.add(d.Name)), u64(devType, e.str.add(d.Type)), u64(devSMType, e.str.add(d.SMType)),
		u32(devID, uint32(idx)), u32(devPCIBus, d.PCIBusID), u32(devNumSMs, d.NumSMs), u32(devWarps, d.WarpsPerSM),
		u32(devLanes, d.LanesPerWarp), u32(devRegs, d.RegsPerLane), u32(devPreds, d.PredicatesPerLane),
		u32(devMajor, d.SMMajor), u32(devMinor, d.SMMinor), u32(devInsnSize, d.InstructionSize),
		u32(devURegs, d.UniformRegs), u32(devUPreds, d.UniformPredicates))
}

// device writes the context (and module), grid and SM subtrees of device
// row di below the device table devtbl.
func (e *emitter) device(d *Device, di, devtbl uint32) {
	tag := fmt.Sprintf("dev%d", di)
	if len(d.Contexts) > 0 {
		var rows []byte
		for _, c := range d.Contexts {
			rows = append(rows, row(e.rows.Context, Current.Context, u64(ctxID, c.ID), u32(ctxDevice, di), u32(ctxTID, c.HostTID))...)
		}
		ctxtbl := e.add(section{name: ".cudbg.ctxtbl." + tag, typ: ShtCtxTable, link: devtbl, info: di,
			entsize: uint64(e.rows.Context), data: rows})
		for ci, c := range d.Contexts {
			e.moduleTable(c, tag, ctxtbl, uint32(ci))
		}
	}
	if len(d.Grids) > 0 || d.EmptyGridTable {
		var rows []byte
		for _, g := range d.Grids {
			rows = append(rows, e.gridRow(g)...)
		}
		e.add(section{name: ".cudbg.gridtbl." + tag, typ: ShtGridTbl, link: devtbl, info: di,
			entsize: uint64(e.rows.Grid), data: rows})
	}
	if len(d.SMs) > 0 {
		var rows []byte
		for _, s := range d.SMs {
			valid := uint32(0)
			if s.ErrorPCValid {
				valid = 1
			}
			rows = append(rows, row(e.rows.SM, Current.SM, u32(smID, s.ID), u32(smExc, s.Exception),
				u32(smErrorPCValid, valid), u64(smErrorPC, s.ErrorPC))...)
		}
		smtbl := e.add(section{name: ".cudbg.smtbl." + tag, typ: ShtSMTable, link: devtbl, info: di,
			entsize: uint64(e.rows.SM), data: rows})
		for si, s := range d.SMs {
			e.sm(s, fmt.Sprintf("%s.sm%d", tag, si), smtbl, uint32(si))
		}
	}
}

// moduleTable writes context row ci's module table and remembers where each
// module's row is, for the images below it.
func (e *emitter) moduleTable(c *Context, tag string, ctxtbl, ci uint32) {
	if len(c.Modules) == 0 {
		return
	}
	var rows []byte
	for _, m := range c.Modules {
		rows = append(rows, row(e.rows.Module, Current.Module, u64(0, m.Handle))...)
	}
	modtbl := e.add(section{name: fmt.Sprintf(".cudbg.modtbl.%s.ctx%d", tag, ci), typ: ShtModTable, link: ctxtbl,
		info: ci, entsize: uint64(e.rows.Module), data: rows})
	for mi, m := range c.Modules {
		e.modules[m] = [2]uint32{modtbl, uint32(mi)}
	}
}

func (e *emitter) gridRow(g *Grid) []byte {
	fs := []field{u64(gridID, g.ID), u64(gridCtx, g.ContextID), u64(gridFunc, g.FunctionEntry),
		u64(gridEntry, g.FunctionEntry), u64(gridModule, g.ModuleHandle), u32(gridKind, g.Kind),
		u32(gridStatus, g.Status), u32(gridNumRegs, g.NumRegs), u32(gridHostTID, g.HostTID)}
	fs = append(fs, dim3(gridDim, g.GridDim)...)
	fs = append(fs, dim3(gridBlockDim, g.BlockDim)...)
	return row(e.rows.Grid, Current.Grid, fs...)
}

// sm writes SM row si's CTA table and everything below it.
func (e *emitter) sm(s *SM, tag string, smtbl, si uint32) {
	if len(s.CTAs) == 0 && !s.EmptyCTATable {
		return
	}
	var rows []byte
	for _, c := range s.CTAs {
		rows = append(rows, row(e.rows.CTA, Current.CTA, append(dim3(ctaBlock, c.Block), u64(ctaGrid, c.GridID))...)...)
	}
	ctatbl := e.add(section{name: ".cudbg.ctatbl." + tag, typ: ShtCTATable, link: smtbl, info: si,
		entsize: uint64(e.rows.CTA), data: rows})
	for ci, c := range s.CTAs {
		if len(c.Warps) == 0 {
			continue
		}
		ctag := fmt.Sprintf("%s.cta%d", tag, ci)
		var wrows []byte
		for _, w := range c.Warps {
			wrows = append(wrows, e.warpRow(w)...)
		}
		wptbl := e.add(section{name: ".cudbg.wptbl." + ctag, typ: ShtWPTable, link: ctatbl, info: uint32(ci),
			entsize: uint64(e.rows.Warp), data: wrows})
		for wi, w := range c.Warps {
			e.warp(w, fmt.Sprintf("%s.wp%d", ctag, wi), wptbl, uint32(wi))
		}
	}
}

func flag(v bool) uint32 {
	if v {
		return 1
	}
	return 0
}

func (e *emitter) warpRow(w *Warp) []byte {
	return row(e.rows.Warp, Current.Warp, u64(warpErrorPC, w.ErrorPC), u32(warpID, w.ID), u32(warpValid, w.Valid),
		u32(warpActive, w.Active), u32(warpBroken, flag(w.Broken)), u32(warpEPV, flag(w.ErrorPCValid)))
}

// warp writes warp row wi's uniform leaves, its lane table (a row for
// every lane ID up to the highest, zero where no lane is given) and the
// lanes' leaves.
func (e *emitter) warp(w *Warp, tag string, wptbl, wi uint32) {
	if w.URegs != nil {
		e.add(section{name: ".cudbg.uregs." + tag, typ: ShtDevURegs, link: wptbl, info: wi, data: words(w.URegs)})
	}
	if w.UPreds != nil {
		e.add(section{name: ".cudbg.upred." + tag, typ: ShtDevUPred, link: wptbl, info: wi, data: words(w.UPreds)})
	}
	if len(w.Lanes) == 0 {
		return
	}
	n := uint32(0)
	for _, l := range w.Lanes {
		n = max(n, l.ID+1)
	}
	rows := make([]byte, int(n)*e.rows.Lane)
	for _, l := range w.Lanes {
		r := row(e.rows.Lane, Current.Lane, u64(laneVPC, l.PC), u64(lanePhysPC, l.PC), u32(laneLn, l.ID),
			u32(laneTid, l.Thread[0]), u32(laneTid+4, l.Thread[1]), u32(laneTid+8, l.Thread[2]),
			u32(laneException, l.Exception), u32(laneDepth, l.CallDepth))
		copy(rows[int(l.ID)*e.rows.Lane:], r)
	}
	lntbl := e.add(section{name: ".cudbg.lntbl." + tag, typ: ShtLNTable, link: wptbl, info: wi,
		entsize: uint64(e.rows.Lane), data: rows})
	for _, l := range w.Lanes {
		ltag := fmt.Sprintf("%s.ln%d", tag, l.ID)
		if l.Regs != nil {
			e.add(section{name: ".cudbg.regs." + ltag, typ: ShtDevRegs, link: lntbl, info: l.ID, data: words(l.Regs)})
		}
		if l.Preds != nil {
			e.add(section{name: ".cudbg.pred." + ltag, typ: ShtDevPred, link: lntbl, info: l.ID, data: words(l.Preds)})
		}
	}
}

// images writes the cubins, below their module's row or at the root.
func (e *emitter) images(imgs []Image) error {
	for i, img := range imgs {
		s := section{name: img.Name, typ: ShtElfImg, data: img.Data}
		if img.Relocated {
			s.typ = ShtRelfImg
		}
		if s.name == "" {
			s.name = fmt.Sprintf(".cudbg.%s.%d", map[bool]string{true: "relfimg", false: "elfimg"}[img.Relocated], i)
		}
		if img.Module != nil {
			at, ok := e.modules[img.Module]
			if !ok {
				return fmt.Errorf("image %s: its module is in no context", s.name)
			}
			s.link, s.info = at[0], at[1]
		}
		e.add(s)
	}
	return nil
}
