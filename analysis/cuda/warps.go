package cuda

// The SM → CTA → warp → lane part of the table tree, linked through
// sh_link (the parent table's section) and sh_info (the parent row).

// readSMs reads the SM tables: the SMs of each device, with the exception
// and errorPC a row written by driver r555 or later records.
func (p *dumpParser) readSMs() {
	for _, t := range p.tables(shtSMTable, smRowSize, smReadSize) {
		dev := int(t.sec.Info)
		if dev >= len(p.d.Devices) {
			p.problem("SM table %s: no device row %d", t.sec.Name, dev)
			continue
		}
		for i := 0; i < t.n; i++ {
			r := t.row(i)
			p.smIndex[[2]int{t.sec.index, i}] = len(p.d.SMs)
			p.d.SMs = append(p.d.SMs, SM{Device: dev, ID: le.Uint32(r[0:]), Exception: Exception(le.Uint32(r[8:])),
				ErrorPCValid: le.Uint32(r[12:]) != 0, ErrorPC: le.Uint64(r[16:])})
		}
	}
}

// readWarps reads the CTA, warp and lane tables below the SMs.
func (p *dumpParser) readWarps() {
	for _, t := range p.tables(shtCTATable, ctaRowSize, 0) {
		sm, ok := p.smIndex[[2]int{int(t.sec.Link), int(t.sec.Info)}]
		if !ok {
			p.problem("CTA table %s: no SM row %d in section %d", t.sec.Name, t.sec.Info, t.sec.Link)
			continue
		}
		for i := 0; i < t.n; i++ {
			r := t.row(i)
			p.ctaOf[[2]int{t.sec.index, i}] = ctaKey{sm: sm, grid: le.Uint64(r[0:]),
				block: [3]uint32{le.Uint32(r[8:]), le.Uint32(r[12:]), le.Uint32(r[16:])}}
		}
	}
	leaves := p.leaves()
	warpIndex := p.readWarpTables(leaves)
	p.readLaneTables(warpIndex, leaves)
}

// leafRefs are the leaves hanging below one table row: section index + 1
// of its register and predicate leaves (lanes), or of its uniform ones
// (warps); any says some per-lane leaf is there.
type leafRefs struct {
	regs, preds int
	any         bool
}

// leaves indexes the register, predicate, local-memory and call-stack
// leaves by the (table section, row) they hang below. A leaf whose data
// lies past the end of the file is left out, as LLDB drops it
// (TestNVGPUArtificialMalformed.test_truncated_leaf_is_skipped).
func (p *dumpParser) leaves() map[[2]int]*leafRefs {
	out := map[[2]int]*leafRefs{}
	for i := range p.f.sections {
		s := &p.f.sections[i]
		switch s.Type {
		case shtDevRegs, shtDevPred, shtLocalMem, shtBT, shtDevURegs, shtDevUPred:
		default:
			continue
		}
		if _, err := p.f.sectionData(s); err != nil {
			continue
		}
		k := [2]int{int(s.Link), int(s.Info)}
		l := out[k]
		if l == nil {
			l = &leafRefs{}
			out[k] = l
		}
		switch s.Type {
		case shtDevRegs, shtDevURegs:
			l.regs = s.index + 1
		case shtDevPred, shtDevUPred:
			l.preds = s.index + 1
		}
		l.any = l.any || s.Type == shtDevRegs || s.Type == shtDevPred || s.Type == shtLocalMem || s.Type == shtBT
	}
	return out
}

// readWarpTables reads the warps of every CTA; the result maps (warp
// table section, row) to the warp's index in CoreDump.Warps.
func (p *dumpParser) readWarpTables(leaves map[[2]int]*leafRefs) map[[2]int]int {
	warpIndex := map[[2]int]int{}
	for _, t := range p.tables(shtWPTable, warpRowSize, 0) {
		cta, ok := p.ctaOf[[2]int{int(t.sec.Link), int(t.sec.Info)}]
		if !ok {
			p.problem("warp table %s: no CTA row %d in section %d", t.sec.Name, t.sec.Info, t.sec.Link)
			continue
		}
		sm := &p.d.SMs[cta.sm]
		for i := 0; i < t.n; i++ {
			r := t.row(i)
			key := [2]int{t.sec.index, i}
			warpIndex[key] = len(p.d.Warps)
			w := Warp{
				Device: sm.Device, SMIndex: cta.sm, SM: sm.ID, GridID: cta.grid, Block: cta.block,
				ErrorPC: le.Uint64(r[0:]), WarpID: le.Uint32(r[8:]), ValidLanes: le.Uint32(r[12:]),
				ActiveLanes: le.Uint32(r[16:]), Broken: le.Uint32(r[20:]) != 0, ErrorPCValid: le.Uint32(r[24:]) != 0,
			}
			if l := leaves[key]; l != nil {
				w.uregs, w.upreds = l.regs, l.preds
			}
			p.d.Warps = append(p.d.Warps, w)
		}
	}
	return warpIndex
}

// readLaneTables reads the lanes of every warp (64 at most a warp).
func (p *dumpParser) readLaneTables(warpIndex map[[2]int]int, leaves map[[2]int]*leafRefs) {
	for _, t := range p.tables(shtLNTable, laneRowSize, 0) {
		wi, ok := warpIndex[[2]int{int(t.sec.Link), int(t.sec.Info)}]
		if !ok {
			p.problem("lane table %s: no warp row %d in section %d", t.sec.Name, t.sec.Info, t.sec.Link)
			continue
		}
		w := &p.d.Warps[wi]
		for i := 0; i < t.n && i < 64; i++ {
			r := t.row(i)
			l := Lane{
				Row: i, PC: le.Uint64(r[0:]), Lane: le.Uint32(r[16:]),
				Thread:    [3]uint32{le.Uint32(r[20:]), le.Uint32(r[24:]), le.Uint32(r[28:])},
				Exception: Exception(le.Uint32(r[32:])), CallDepth: le.Uint32(r[36:]),
			}
			if lr := leaves[[2]int{t.sec.index, i}]; lr != nil {
				l.leaf, l.regs, l.preds = lr.any, lr.regs, lr.preds
				p.d.laneLeaves = true
			}
			w.Lanes = append(w.Lanes, l)
		}
	}
}
