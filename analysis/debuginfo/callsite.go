package debuginfo

import (
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"slices"
	"sort"
)

// Call sites (DWARF 5 §3.4.1, "Call Site Entries and Parameters") and the
// per-module questions gdb asks of them to find tail-call frames: which call
// returns to a pc, which tail calls a function makes, and where the function
// containing a pc starts. The search across modules is in tailcall.go.

// DWARF 4 GNU extensions that DWARF 5 standardized (gcc's
// include/dwarf2.def): DW_TAG_GNU_call_site carries its return address in
// DW_AT_low_pc and its callee in DW_AT_abstract_origin.
const (
	tagGNUCallSite          dwarf.Tag  = 0x4109
	attrGNUCallSiteTarget   dwarf.Attr = 0x2113
	attrGNUTailCall         dwarf.Attr = 0x2115
	attrGNUAllTailCallSites dwarf.Attr = 0x2116
	attrGNUAllCallSites     dwarf.Attr = 0x2117
)

// maxCallSitesPerUnit caps the call sites recorded for one unit.
const maxCallSitesPerUnit = 1 << 22

// callSite is one DW_TAG_call_site (or DW_TAG_GNU_call_site), reduced.
type callSite struct {
	returnPC uint64 // DW_AT_call_return_pc (GNU: DW_AT_low_pc)
	die      int32  // the call site's own DIE
	fn       int32  // the nearest enclosing DW_TAG_subprogram, -1 if none
	tail     bool   // DW_AT_call_tail_call / DW_AT_GNU_tail_call
	// target is the DIE of the called subprogram (DW_AT_call_origin, or
	// DW_AT_abstract_origin for GNU call sites); 0 when the call is
	// indirect (DW_AT_call_target, an expression over the caller's
	// registers) or not described.
	target dwarf.Offset
}

// unitCalls is what one unit says about calls.
type unitCalls struct {
	sites []callSite // sorted by returnPC; DIE order among equal pcs
	// complete marks the subprograms that describe all their (tail) calls
	// (DW_AT_call_all_calls, DW_AT_call_all_tail_calls or the GNU
	// equivalents): only their tail calls can be searched (DWARF 5 §3.3.1.6).
	complete map[int32]bool
	// entry holds the entry pcs of subprograms whose entry (as gdb's
	// block::entry_pc computes it) differs from die.low.
	entry map[int32]uint64
}

// noteSubprogram records a subprogram's call flags and entry pc while its
// unit is decoded. rs are its ranges in DW_AT_ranges order.
func (c *unitCalls) noteSubprogram(a *dieAttrs, idx int32, low uint64, rs [][2]uint64) {
	if a.callAll {
		if c.complete == nil {
			c.complete = map[int32]bool{}
		}
		c.complete[idx] = true
	}
	// gdb 13's entry_pc: the low pc of a contiguous block, else the start
	// of the first range listed (not the lowest: a hot/cold split function
	// lists its hot part first).
	if a.pc.hasLow {
		return
	}
	for _, rg := range rs {
		if rg[1] > rg[0] {
			if rg[0] != low {
				if c.entry == nil {
					c.entry = map[int32]uint64{}
				}
				c.entry[idx] = rg[0]
			}
			return
		}
	}
}

// noteCallSite records a call site DIE while its unit is decoded. Like
// gdb's read_call_site_scope, one without a return pc is ignored.
func (c *unitCalls) noteCallSite(a *dieAttrs, idx int32) {
	if len(c.sites) >= maxCallSitesPerUnit {
		return
	}
	pc, ok := a.returnPC, a.hasReturnPC
	if !ok {
		if pc, ok = a.pc.low, a.pc.hasLow; !ok {
			return
		}
	}
	cs := callSite{returnPC: pc, die: idx, fn: -1, tail: a.tail}
	// The first of DW_AT_call_target, DW_AT_GNU_call_site_target,
	// DW_AT_call_origin and DW_AT_abstract_origin present names the
	// callee; only a reference can be followed without the caller's
	// registers.
	for i, v := range a.target {
		if a.hasTarget[i] {
			if v.class == valRef {
				cs.target = dwarf.Offset(v.u)
			}
			break
		}
	}
	c.sites = append(c.sites, cs)
}

// finish links call sites to their functions and sorts them by return pc.
func (c *unitCalls) finish(t *unitTree) {
	for i := range c.sites {
		cs := &c.sites[i]
		// Skip inlined subroutines and lexical blocks: a call in inlined
		// code belongs to the function it was inlined into.
		p := t.dies[cs.die].parent
		for n := 0; p >= 0 && n < maxDIEsPerUnit; n++ {
			if tag := t.dies[p].tag; tag == dwarf.TagSubprogram || tag == dwarf.TagSubroutineType {
				break
			}
			p = t.dies[p].parent
		}
		if p >= 0 && t.dies[p].tag == dwarf.TagSubprogram {
			cs.fn = p
		}
	}
	slices.SortStableFunc(c.sites, func(a, b callSite) int { return cmp.Compare(a.returnPC, b.returnPC) })
}

// at returns the first call site returning to pc, or nil.
func (c *unitCalls) at(pc uint64) *callSite {
	i := sort.Search(len(c.sites), func(i int) bool { return c.sites[i].returnPC >= pc })
	if i < len(c.sites) && c.sites[i].returnPC == pc {
		return &c.sites[i]
	}
	return nil
}

// entryPC is the entry pc of subprogram DIE idx.
func (t *unitTree) entryPC(idx int) uint64 {
	if e, ok := t.calls.entry[int32(idx)]; ok {
		return e
	}
	return t.dies[idx].low
}

// function returns the subprogram DIE containing pc — gdb's
// block_linkage_function of the innermost block: inlined subroutines are
// skipped — or -1.
func (t *unitTree) function(pc uint64) int {
	i := t.innermost(pc)
	for n := 0; i >= 0 && n < maxDIEsPerUnit; n++ {
		if t.dies[i].tag == dwarf.TagSubprogram {
			return i
		}
		i = int(t.dies[i].parent)
	}
	return -1
}

// CallSite is one call a function makes, as its DWARF describes it.
// Addresses are link-time addresses of the module.
type CallSite struct {
	// ReturnPC is the address the call returns to: the instruction after
	// the call, or after the jump of a tail call.
	ReturnPC uint64
	// Tail marks a tail call, a jump that replaced the caller's frame.
	Tail bool
	// TargetAddrs are the entry addresses of the called function when this
	// module defines it (DW_AT_low_pc, or each DW_AT_ranges start).
	TargetAddrs []uint64
	// TargetName is the linkage name of a called function the unit only
	// declares: the process's symbol tables say where it is.
	TargetName string
}

// TargetKnown reports whether the callee can be found without the
// caller's registers (it cannot for indirect calls).
func (c CallSite) TargetKnown() bool { return len(c.TargetAddrs) > 0 || c.TargetName != "" }

// unitOfPC returns the decoded unit gdb's find_pc_compunit_symtab would
// pick for pc — the first one with a function covering pc, else the first
// covering it at all — and the innermost DIE at pc there (-1 if none).
func (df *dwarfFile) unitOfPC(pc uint64) (*unitTree, int) {
	var first *unitTree
	for _, u := range df.unitsFor(pc) {
		t, err := df.tree(u)
		if err != nil {
			continue
		}
		if idx := t.function(pc); idx >= 0 {
			return t, idx
		}
		if first == nil {
			first = t
		}
	}
	return first, -1
}

// CallSiteAt returns the call site whose return address is returnPC, as
// gdb's call_site_for_pc finds it: among the call sites of the unit that
// contains returnPC-1 (a tail call may be the last instruction of its unit).
func (s *Symbols) CallSiteAt(returnPC uint64) (CallSite, bool) {
	df := s.dwarfData()
	if df == nil || returnPC == 0 {
		return CallSite{}, false
	}
	t, _ := df.unitOfPC(returnPC - 1)
	if t == nil {
		return CallSite{}, false
	}
	cs := t.calls.at(returnPC)
	if cs == nil {
		return CallSite{}, false
	}
	return t.export(cs), true
}

// TailCalls returns the tail calls made by the function whose entry is
// entry, as gdb's func_addr_to_tail_call_list: ok is false when no DWARF
// function starts exactly there; calls is empty when the function does not
// claim to describe all its calls.
func (s *Symbols) TailCalls(entry uint64) (calls []CallSite, ok bool) {
	df := s.dwarfData()
	if df == nil {
		return nil, false
	}
	t, fn := df.unitOfPC(entry)
	if fn < 0 || t.entryPC(fn) != entry {
		return nil, false
	}
	if !t.calls.complete[int32(fn)] {
		return nil, true
	}
	for i := range t.calls.sites {
		if cs := &t.calls.sites[i]; cs.tail && int(cs.fn) == fn {
			calls = append(calls, t.export(cs))
		}
	}
	return calls, true
}

// FunctionStart returns the entry of the function containing pc, as gdb's
// get_pc_function_start: the DWARF function's entry pc (inlined
// subroutines skipped), else the address of the symbol covering pc.
func (s *Symbols) FunctionStart(pc uint64) (uint64, bool) {
	if df := s.dwarfData(); df != nil {
		if t, fn := df.unitOfPC(pc); fn >= 0 {
			return t.entryPC(fn), true
		}
	}
	if sym := s.symbolAt(pc); sym != nil && sym.addr != 0 {
		return sym.addr, true
	}
	return 0, false
}

// export resolves a call site's target.
func (t *unitTree) export(cs *callSite) CallSite {
	out := CallSite{ReturnPC: cs.returnPC, Tail: cs.tail}
	if cs.target != 0 {
		out.TargetAddrs, out.TargetName = t.df.callTarget(cs.target)
	}
	return out
}

// callTarget resolves the DIE a call site names as its callee, as gdb's
// read_call_site_scope does: a declaration by its linkage name (looked up
// later in the symbol tables), a definition with DW_AT_ranges by the start
// of every range, any other definition by DW_AT_low_pc. A DIE without
// valid addresses (an abstract instance) resolves to nothing.
func (df *dwarfFile) callTarget(off dwarf.Offset) (addrs []uint64, name string) {
	chain := df.attrsChain(uint64(off))
	if len(chain) == 0 {
		return nil, ""
	}
	// first returns the first DIE of the chain that has an attribute.
	first := func(has func(a *dieAttrs) bool) *chainedDIE {
		for i := range chain {
			if has(&chain[i].attrs) {
				return &chain[i]
			}
		}
		return nil
	}
	decl := first(func(a *dieAttrs) bool { return a.hasDecl })
	if decl != nil && decl.attrs.declaration && first(func(a *dieAttrs) bool { return a.hasSpec }) == nil {
		if c := first(func(a *dieAttrs) bool { return a.linkage != 0 }); c != nil {
			if s := df.str(c.attrs.linkage); s != "" {
				return nil, s
			}
		}
		// Without a linkage name gdb looks the callee up by its physname,
		// which for C++ carries the parameter list ("pthread_join(unsigned
		// long, void**)" for an extern "C" declaration) and matches no
		// symbol: the target stays unknown, and so do tail calls behind it.
		if c := first(func(a *dieAttrs) bool { return a.name != 0 }); c != nil {
			if s := df.str(c.attrs.name); s != "" && !df.isCPlusPlusAt(off) {
				return nil, s
			}
		}
		return nil, ""
	}
	if c := first(func(a *dieAttrs) bool { return a.pc.hasRangesAttr }); c != nil {
		rs, ok := df.appendRanges(nil, &c.attrs.pc, &c.rctx)
		if !ok {
			return nil, ""
		}
		for _, rg := range rs {
			if rg[1] > rg[0] {
				addrs = append(addrs, rg[0])
			}
		}
		return addrs, ""
	}
	lc := first(func(a *dieAttrs) bool { return a.pc.hasLow })
	if lc == nil || lc.attrs.pc.low == 0 {
		return nil, ""
	}
	low := lc.attrs.pc.low
	var high uint64
	hc := first(func(a *dieAttrs) bool { return a.pc.highKind != highNone })
	switch {
	case hc == nil:
		return nil, ""
	case hc.attrs.pc.highKind == highAddr:
		high = hc.attrs.pc.high
	default: // DWARF 4+: an offset from the low pc
		high = low + hc.attrs.pc.high
	}
	if high <= low {
		return nil, ""
	}
	return []uint64{low}, ""
}

// isCPlusPlusAt reports whether the unit holding DIE off is C++.
func (df *dwarfFile) isCPlusPlusAt(off dwarf.Offset) bool {
	u, ok := df.unitOf(uint64(off))
	if !ok {
		return false
	}
	ud, err := df.readUnitDIE(df.units[u], false)
	return err == nil && isCPlusPlus(ud.attrs.lang)
}

// chainedDIE is one DIE of a DW_AT_specification / DW_AT_abstract_origin
// chain, with what its unit says its ranges are read with.
type chainedDIE struct {
	attrs dieAttrs
	rctx  unitRangeCtx
}

// attrsChain reads the DIE at off and the DIEs its DW_AT_specification and
// DW_AT_abstract_origin lead to, as gdb's dwarf2_attr searches them.
func (df *dwarfFile) attrsChain(off uint64) []chainedDIE {
	var chain []chainedDIE
	for len(chain) < maxRefChain && off != 0 {
		attrs, rctx, ok := df.readDIEAt(off)
		if !ok {
			break
		}
		chain = append(chain, chainedDIE{attrs, rctx})
		off = attrs.spec
		if off == 0 {
			off = attrs.origin
		}
	}
	return chain
}

// symbolByName looks a symbol up by name in the module's symbol tables
// (.symtab of the binary and of its debug file, and .dynsym), as gdb's
// lookup_minimal_symbol does in one objfile: global (or weak) is reported
// as such so that callers can prefer it over file-local symbols. A shared
// library's .dynsym is asked through its hash table (gnuhash.go), and a
// name it exports is taken from there without reading any table whole.
func (s *Symbols) symbolByName(name string) (addr uint64, global, ok bool) {
	if a, found := s.exportedByName(name); found {
		return a, true, true
	}
	h := s.hashTable()
	for _, t := range s.nameTables() {
		if t == nil {
			continue
		}
		var a uint64
		var found, g bool
		if t.dynamic && h != nil {
			a, g, found = h.global(name)
		} else if a, found = t.names()[name]; found {
			g = t.globalName(name)
		}
		if !found {
			continue
		}
		if g {
			return a, true, true
		}
		if !ok {
			addr, ok = a, true
		}
	}
	return addr, false, ok
}

// globalByName is the global definition of name in the module, if it has
// one: from the hash table alone for a shared library.
func (s *Symbols) globalByName(name string) (uint64, bool) {
	if s.libraryHash() != nil {
		return s.exportedByName(name)
	}
	a, g, ok := s.symbolByName(name)
	return a, ok && g
}

// exportedByName is a shared library's global code symbol name from its
// dynamic hash table. A library's .symtab holds no other global symbols:
// the linker makes hidden and version-script-local symbols STB_LOCAL.
func (s *Symbols) exportedByName(name string) (uint64, bool) {
	h := s.libraryHash()
	if h == nil {
		return 0, false
	}
	a, g, ok := h.global(name)
	return a, ok && g
}

// isGlobal reports whether the code symbol name at addr is global or weak.
func (t *symbolTable) isGlobal(name string, addr uint64) bool {
	i := sort.Search(len(t.syms), func(i int) bool { return t.syms[i].addr >= addr })
	for ; i < len(t.syms) && t.syms[i].addr == addr; i++ {
		if string(t.nameBytes(&t.syms[i])) == name {
			return t.syms[i].bind != elf.STB_LOCAL
		}
	}
	return false
}
