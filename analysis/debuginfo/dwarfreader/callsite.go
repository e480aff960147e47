package dwarfreader

import (
	"cmp"
	"debug/dwarf"
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

// CallSite is one DW_TAG_call_site (or DW_TAG_GNU_call_site), reduced.
type CallSite struct {
	ReturnPC uint64 // DW_AT_call_return_pc (GNU: DW_AT_low_pc)
	die      int32  // the call site's own DIE
	Fn       int32  // the nearest enclosing DW_TAG_subprogram, -1 if none
	Tail     bool   // DW_AT_call_tail_call / DW_AT_GNU_tail_call
	// Target is the DIE of the called subprogram (DW_AT_call_origin, or
	// DW_AT_abstract_origin for GNU call sites); 0 when the call is
	// indirect (DW_AT_call_target, an expression over the caller's
	// registers) or not described.
	Target dwarf.Offset
}

// unitCalls is what one unit says about calls.
type unitCalls struct {
	Sites []CallSite // sorted by returnPC; DIE order among equal pcs
	// Complete marks the subprograms that describe all their (tail) calls
	// (DW_AT_call_all_calls, DW_AT_call_all_tail_calls or the GNU
	// equivalents): only their tail calls can be searched (DWARF 5 §3.3.1.6).
	Complete map[int32]bool
	// entry holds the entry pcs of subprograms whose entry (as gdb's
	// block::entry_pc computes it) differs from die.low.
	entry map[int32]uint64
}

// noteSubprogram records a subprogram's call flags and entry pc while its
// unit is decoded. rs are its ranges in DW_AT_ranges order.
func (c *unitCalls) noteSubprogram(a *DieAttrs, idx int32, low uint64, rs [][2]uint64) {
	if a.callAll {
		if c.Complete == nil {
			c.Complete = map[int32]bool{}
		}
		c.Complete[idx] = true
	}
	// gdb 13's entry_pc: the low pc of a contiguous block, else the start
	// of the first range listed (not the lowest: a hot/cold split function
	// lists its hot part first).
	if a.Pc.HasLow {
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
func (c *unitCalls) noteCallSite(a *DieAttrs, idx int32) {
	if len(c.Sites) >= maxCallSitesPerUnit {
		return
	}
	pc, ok := a.returnPC, a.hasReturnPC
	if !ok {
		if pc, ok = a.Pc.Low, a.Pc.HasLow; !ok {
			return
		}
	}
	cs := CallSite{ReturnPC: pc, die: idx, Fn: -1, Tail: a.tail}
	// The first of DW_AT_call_target, DW_AT_GNU_call_site_target,
	// DW_AT_call_origin and DW_AT_abstract_origin present names the
	// callee; only a reference can be followed without the caller's
	// registers.
	for i, v := range a.target {
		if a.hasTarget[i] {
			if v.Class == ValRef {
				cs.Target = dwarf.Offset(v.U)
			}
			break
		}
	}
	c.Sites = append(c.Sites, cs)
}

// finish links call sites to their functions and sorts them by return pc.
func (c *unitCalls) finish(t *UnitTree) {
	for i := range c.Sites {
		cs := &c.Sites[i]
		// Skip inlined subroutines and lexical blocks: a call in inlined
		// code belongs to the function it was inlined into.
		p := t.Dies[cs.die].Parent
		for n := 0; p >= 0 && n < maxDIEsPerUnit; n++ {
			if tag := t.Dies[p].Tag; tag == dwarf.TagSubprogram || tag == dwarf.TagSubroutineType {
				break
			}
			p = t.Dies[p].Parent
		}
		if p >= 0 && t.Dies[p].Tag == dwarf.TagSubprogram {
			cs.Fn = p
		}
	}
	slices.SortStableFunc(c.Sites, func(a, b CallSite) int { return cmp.Compare(a.ReturnPC, b.ReturnPC) })
}

// At returns the first call site returning to pc, or nil.
func (c *unitCalls) At(pc uint64) *CallSite {
	i := sort.Search(len(c.Sites), func(i int) bool { return c.Sites[i].ReturnPC >= pc })
	if i < len(c.Sites) && c.Sites[i].ReturnPC == pc {
		return &c.Sites[i]
	}
	return nil
}

// EntryPC is the entry pc of subprogram DIE idx.
func (t *UnitTree) EntryPC(idx int) uint64 {
	if e, ok := t.Calls.entry[int32(idx)]; ok {
		return e
	}
	return t.Dies[idx].Low
}

// function returns the subprogram DIE containing pc — gdb's
// block_linkage_function of the innermost block: inlined subroutines are
// skipped — or -1.
func (t *UnitTree) function(pc uint64) int {
	i := t.Innermost(pc)
	for n := 0; i >= 0 && n < maxDIEsPerUnit; n++ {
		if t.Dies[i].Tag == dwarf.TagSubprogram {
			return i
		}
		i = int(t.Dies[i].Parent)
	}
	return -1
}

// UnitOfPC returns the decoded unit gdb's find_pc_compunit_symtab would
// pick for pc — the first one with a function covering pc, else the first
// covering it at all — and the innermost DIE at pc there (-1 if none).
func (df *DwarfFile) UnitOfPC(pc uint64) (*UnitTree, int) {
	var first *UnitTree
	for _, u := range df.UnitsFor(pc) {
		t, err := df.Tree(u)
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
