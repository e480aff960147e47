package symbolize

import (
	"debug/dwarf"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
)

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

// CallSiteAt returns the call site whose return address is returnPC, as
// gdb's call_site_for_pc finds it: among the call sites of the unit that
// contains returnPC-1 (a tail call may be the last instruction of its unit).
func (s *Symbols) CallSiteAt(returnPC uint64) (CallSite, bool) {
	df := s.dwarfData()
	if df == nil || returnPC == 0 {
		return CallSite{}, false
	}
	t, _ := df.UnitOfPC(returnPC - 1)
	if t == nil {
		return CallSite{}, false
	}
	cs := t.Calls.At(returnPC)
	if cs == nil {
		return CallSite{}, false
	}
	return export(t, cs), true
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
	t, fn := df.UnitOfPC(entry)
	if fn < 0 || t.EntryPC(fn) != entry {
		return nil, false
	}
	if !t.Calls.Complete[int32(fn)] {
		return nil, true
	}
	for i := range t.Calls.Sites {
		if cs := &t.Calls.Sites[i]; cs.Tail && int(cs.Fn) == fn {
			calls = append(calls, export(t, cs))
		}
	}
	return calls, true
}

// FunctionStart returns the entry of the function containing pc, as gdb's
// get_pc_function_start: the DWARF function's entry pc (inlined
// subroutines skipped), else the address of the symbol covering pc.
func (s *Symbols) FunctionStart(pc uint64) (uint64, bool) {
	if df := s.dwarfData(); df != nil {
		if t, fn := df.UnitOfPC(pc); fn >= 0 {
			return t.EntryPC(fn), true
		}
	}
	if sym := s.symbolAt(pc); sym != nil && sym.Addr != 0 {
		return sym.Addr, true
	}
	return 0, false
}

// export resolves a call site's target.
func export(t *dwarfreader.UnitTree, cs *dwarfreader.CallSite) CallSite {
	out := CallSite{ReturnPC: cs.ReturnPC, Tail: cs.Tail}
	if cs.Target != 0 {
		out.TargetAddrs, out.TargetName = callTarget(t.Df, cs.Target)
	}
	return out
}

// callTarget resolves the DIE a call site names as its callee, as gdb's
// read_call_site_scope does: a declaration by its linkage name (looked up
// later in the symbol tables), a definition with DW_AT_ranges by the start
// of every range, any other definition by DW_AT_low_pc. A DIE without
// valid addresses (an abstract instance) resolves to nothing.
func callTarget(df *dwarfreader.DwarfFile, off dwarf.Offset) (addrs []uint64, name string) {
	chain := attrsChain(df, uint64(off))
	if len(chain) == 0 {
		return nil, ""
	}
	// first returns the first DIE of the chain that has an attribute.
	first := func(has func(a *dwarfreader.DieAttrs) bool) *chainedDIE {
		for i := range chain {
			if has(&chain[i].attrs) {
				return &chain[i]
			}
		}
		return nil
	}
	decl := first(func(a *dwarfreader.DieAttrs) bool { return a.HasDecl })
	if decl != nil && decl.attrs.Declaration && first(func(a *dwarfreader.DieAttrs) bool { return a.HasSpec }) == nil {
		if c := first(func(a *dwarfreader.DieAttrs) bool { return a.Linkage != 0 }); c != nil {
			if s := df.Str(c.attrs.Linkage); s != "" {
				return nil, s
			}
		}
		// Without a linkage name gdb looks the callee up by its physname,
		// which for C++ carries the parameter list ("pthread_join(unsigned
		// long, void**)" for an extern "C" declaration) and matches no
		// symbol: the target stays unknown, and so do tail calls behind it.
		if c := first(func(a *dwarfreader.DieAttrs) bool { return a.Name != 0 }); c != nil {
			if s := df.Str(c.attrs.Name); s != "" && !isCPlusPlusAt(df, off) {
				return nil, s
			}
		}
		return nil, ""
	}
	if c := first(func(a *dwarfreader.DieAttrs) bool { return a.Pc.HasRangesAttr }); c != nil {
		rs, ok := df.AppendRanges(nil, &c.attrs.Pc, &c.rctx)
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
	lc := first(func(a *dwarfreader.DieAttrs) bool { return a.Pc.HasLow })
	if lc == nil || lc.attrs.Pc.Low == 0 {
		return nil, ""
	}
	low := lc.attrs.Pc.Low
	var high uint64
	hc := first(func(a *dwarfreader.DieAttrs) bool { return a.Pc.HighKind != dwarfreader.HighNone })
	switch {
	case hc == nil:
		return nil, ""
	case hc.attrs.Pc.HighKind == dwarfreader.HighAddr:
		high = hc.attrs.Pc.High
	default: // DWARF 4+: an offset from the low pc
		high = low + hc.attrs.Pc.High
	}
	if high <= low {
		return nil, ""
	}
	return []uint64{low}, ""
}

// isCPlusPlusAt reports whether the unit holding DIE off is C++.
func isCPlusPlusAt(df *dwarfreader.DwarfFile, off dwarf.Offset) bool {
	u, ok := df.UnitOf(uint64(off))
	if !ok {
		return false
	}
	ud, err := df.ReadUnitDIE(df.Unit(u), false)
	return err == nil && isCPlusPlus(ud.Attrs.Lang)
}

// chainedDIE is one DIE of a DW_AT_specification / DW_AT_abstract_origin
// chain, with what its unit says its ranges are read with.
type chainedDIE struct {
	attrs dwarfreader.DieAttrs
	rctx  dwarfreader.UnitRangeCtx
}

// attrsChain reads the DIE at off and the DIEs its DW_AT_specification and
// DW_AT_abstract_origin lead to, as gdb's dwarf2_attr searches them.
func attrsChain(df *dwarfreader.DwarfFile, off uint64) []chainedDIE {
	var chain []chainedDIE
	for len(chain) < maxRefChain && off != 0 {
		attrs, rctx, ok := df.ReadDIEAt(off)
		if !ok {
			break
		}
		chain = append(chain, chainedDIE{attrs, rctx})
		off = attrs.Spec
		if off == 0 {
			off = attrs.Origin
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
		if t.Dynamic && h != nil {
			a, g, found = h.Global(name)
		} else {
			a, g, found = t.ByName(name)
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
	a, g, ok := h.Global(name)
	return a, ok && g
}
