package symbolize

import (
	"sort"
	"sync"
)

// Tail-call frames. A function that ends in a tail call jumps to its callee
// instead of calling it, so its frame is gone from the stack and unwinding
// goes straight from the callee to the function's caller. gdb puts the
// missing functions back from the call-site DWARF (DWARF 5 §3.4.1,
// DW_AT_call_tail_call): when the call that the caller's return address
// follows targets another function than the callee's, it searches the tail
// calls from that target down to the callee, and shows one "tail call
// frame" per function on the way when every path agrees (gdb's
// dwarf2/frame-tailcall.c and call_site_find_chain in dwarf2/loc.c).

// Bounds on one search, which hostile or huge DWARF must not blow up.
const (
	maxTailCallDepth = 256     // tail calls in one chain
	maxTailCallSteps = 1 << 14 // call sites visited in one search
)

// AddressSpace is the modules of one process at their load addresses, for
// the searches that cross modules: a call site that only declares its
// callee names it, and the callee may be defined in any module.
// Add every module first; then it is safe for concurrent use.
type AddressSpace struct {
	mods   []*spaceModule // in the order added: the order names are looked up in
	byAddr []*spaceModule // sorted by lo

	namesMu sync.Mutex
	names   map[string]resolved // symbol's answers
}

type spaceModule struct {
	syms   *Symbols
	lo, hi uint64 // run-time addresses of the module's mappings
	bias   uint64 // run-time address - link-time address
}

// Add adds a module mapped at [lo, hi) with load bias bias. Add modules in
// the order gdb lists its objfiles (the executable first): a callee named
// in several modules resolves to the first global definition.
func (a *AddressSpace) Add(syms *Symbols, lo, hi, bias uint64) {
	if syms == nil || hi <= lo {
		return
	}
	m := &spaceModule{syms: syms, lo: lo, hi: hi, bias: bias}
	a.mods = append(a.mods, m)
	i := sort.Search(len(a.byAddr), func(i int) bool { return a.byAddr[i].lo > lo })
	a.byAddr = append(a.byAddr, nil)
	copy(a.byAddr[i+1:], a.byAddr[i:])
	a.byAddr[i] = m
}

func (a *AddressSpace) module(pc uint64) *spaceModule {
	i := sort.Search(len(a.byAddr), func(i int) bool { return a.byAddr[i].lo > pc }) - 1
	if i >= 0 && pc < a.byAddr[i].hi {
		return a.byAddr[i]
	}
	return nil
}

// symbol resolves a callee's linkage name to its run-time address as gdb's
// lookup_minimal_symbol does: the first global definition in module order,
// else the first file-local one. Shared libraries answer the first question
// from their hash tables (gnuhash.go); symbol tables are read whole only
// when no module exports the name. Answers are remembered per name.
func (a *AddressSpace) symbol(name string) (uint64, bool) {
	a.namesMu.Lock()
	r, done := a.names[name]
	a.namesMu.Unlock()
	if done {
		return r.addr, r.ok
	}
	r = a.resolve(name)
	a.namesMu.Lock()
	if a.names == nil {
		a.names = map[string]resolved{}
	}
	a.names[name] = r
	a.namesMu.Unlock()
	return r.addr, r.ok
}

// resolved is a name's run-time address, or ok false.
type resolved struct {
	addr uint64
	ok   bool
}

func (a *AddressSpace) resolve(name string) resolved {
	for _, m := range a.mods {
		if addr, ok := m.syms.globalByName(name); ok {
			return resolved{addr + m.bias, true}
		}
	}
	for _, m := range a.mods {
		if addr, _, ok := m.syms.symbolByName(name); ok {
			return resolved{addr + m.bias, true}
		}
	}
	return resolved{}
}

// site is a call site at run-time addresses.
type site struct {
	m  *spaceModule
	cs CallSite
}

func (s site) pc() uint64 { return s.cs.ReturnPC + s.m.bias }

// targets are the run-time entry addresses the call may go to.
func (a *AddressSpace) targets(s site) ([]uint64, bool) {
	if s.cs.TargetName != "" {
		addr, ok := a.symbol(s.cs.TargetName)
		return []uint64{addr}, ok
	}
	if len(s.cs.TargetAddrs) == 0 {
		return nil, false
	}
	out := make([]uint64, len(s.cs.TargetAddrs))
	for i, t := range s.cs.TargetAddrs {
		out[i] = t + s.m.bias
	}
	return out, true
}

// TailCallFrames returns the return addresses of the tail-call frames
// between a callee frame and its caller, innermost first, as gdb's bt shows
// them; nil when there are none or they cannot be determined
// unambiguously. callerPC is the caller's pc (the return address the
// callee's frame unwound to); calleePC is the callee frame's pc as gdb's
// get_frame_address_in_block gives it (minus one for a return address).
// Each returned pc is the address after a tail call's jump: symbolize it
// like a return address (at pc-1), innermost inline level only.
func (a *AddressSpace) TailCallFrames(callerPC, calleePC uint64) []uint64 {
	cm := a.module(calleePC)
	if cm == nil {
		return nil
	}
	callee, ok := cm.syms.FunctionStart(calleePC - cm.bias)
	if !ok {
		return nil
	}
	m := a.module(callerPC - 1)
	if m == nil {
		return nil
	}
	first, ok := m.syms.CallSiteAt(callerPC - m.bias)
	if !ok {
		return nil
	}
	s := &chainSearch{a: a, callee: callee + cm.bias, calleeMod: cm, onPath: map[uint64]bool{}}
	s.visit(site{m, first})
	if s.failed || s.result == nil {
		return nil
	}
	return s.result.frames()
}

// chainSearch is gdb's call_site_find_chain: a depth-first walk of the
// tail calls from the caller's call site to the callee's function,
// intersecting every chain found.
type chainSearch struct {
	a         *AddressSpace
	callee    uint64
	calleeMod *spaceModule
	chain     []uint64        // return pcs of the tail calls on the current path
	onPath    map[uint64]bool // the same, as a set: a path visits a call site once
	steps     int
	result    *tailChain
	failed    bool // a callee that cannot be resolved makes the whole search fail
}

// visit walks from call site s; false stops the search.
func (c *chainSearch) visit(s site) bool {
	if c.steps++; c.steps > maxTailCallSteps {
		c.failed = true
		return false
	}
	// Most calls go straight to the callee. When the callee's module names
	// it as the call does, take that without scanning every module's
	// symbols (gdb would pick another module's definition of the name only
	// where one interposes it, and then find no tail calls either).
	if name := s.cs.TargetName; name != "" {
		addr, ok := c.calleeMod.syms.globalByName(name)
		if !ok {
			addr, _, ok = c.calleeMod.syms.symbolByName(name)
		}
		if ok && addr+c.calleeMod.bias == c.callee {
			c.result = c.result.intersect(c.chain)
			return c.result != nil
		}
	}
	targets, ok := c.a.targets(s)
	if !ok {
		c.failed = true
		return false
	}
	for _, t := range targets {
		if t == c.callee {
			c.result = c.result.intersect(c.chain)
			return c.result != nil
		}
	}
	for _, t := range targets {
		m := c.a.module(t)
		if m == nil {
			c.failed = true
			return false
		}
		calls, ok := m.syms.TailCalls(t - m.bias)
		if !ok {
			c.failed = true
			return false
		}
		for _, cs := range calls {
			next := site{m, cs}
			pc := next.pc()
			if c.onPath[pc] {
				continue
			}
			if len(c.chain) >= maxTailCallDepth {
				c.failed = true
				return false
			}
			c.onPath[pc] = true
			c.chain = append(c.chain, pc)
			if !c.visit(next) {
				return false
			}
			delete(c.onPath, pc)
			c.chain = c.chain[:len(c.chain)-1]
		}
	}
	return true
}

// tailChain is the first chain found, with how many of its leading
// (callers) and trailing (callees) tail calls every other chain shares
// (gdb's struct call_site_chain).
type tailChain struct {
	pcs              []uint64
	callers, callees int
}

// intersect is gdb's chain_candidate: it keeps the tail calls at the top
// and at the bottom that chain shares with those found before, and returns
// nil once nothing unambiguous is left.
func (r *tailChain) intersect(chain []uint64) *tailChain {
	if r == nil {
		return &tailChain{pcs: append([]uint64(nil), chain...), callers: len(chain), callees: len(chain)}
	}
	n := len(chain)
	for i := 0; i < min(r.callers, n); i++ {
		if r.pcs[i] != chain[i] {
			r.callers = i
			break
		}
	}
	for i := 0; i < min(r.callees, n); i++ {
		if r.pcs[len(r.pcs)-1-i] != chain[n-1-i] {
			r.callees = i
			break
		}
	}
	// A direct call (an empty chain) met again, or no common part.
	if r.callers == 0 && r.callees == 0 {
		return nil
	}
	return r
}

// frames lists the tail-call frames innermost first (gdb's pretend_pc):
// the shared bottom of the chain, then its shared top.
func (r *tailChain) frames() []uint64 {
	n := len(r.pcs)
	var out []uint64
	for i := 0; i < r.callees && i < n; i++ {
		out = append(out, r.pcs[n-1-i])
	}
	if r.callees != n {
		for i := min(r.callers, n) - 1; i >= 0; i-- {
			out = append(out, r.pcs[i])
		}
	}
	return out
}
