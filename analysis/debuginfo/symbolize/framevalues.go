package symbolize

import (
	"debug/dwarf"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
	"github.com/faultline-dev/faultline/analysis/debuginfo/variables"
)

// FrameValues returns the arguments and locals of one inline level of a
// frame: pc is the link-time pc to look up (a return address already less
// one), level is 0 for the innermost inlined function at pc (as Lookup's
// first Location), bias is the module's load bias (runtime - link-time),
// and fs gives the frame's registers, CFA and memory.
//
// The variables are the DW_TAG_formal_parameter and DW_TAG_variable
// children of that level's DW_TAG_inlined_subroutine or DW_TAG_subprogram
// and of its lexical blocks containing pc (DWARF 5 §3.3.8, §3.5), read on
// demand; arguments first, then locals innermost block first.
func (s *Symbols) FrameValues(pc uint64, level int, bias uint64, fs variables.FrameState) ([]variables.Value, error) {
	df := s.dwarfData()
	if df == nil {
		return nil, variables.ErrNoScope
	}
	var (
		t     *dwarfreader.UnitTree
		chain []int
	)
	for _, u := range df.UnitsFor(pc) {
		tr, err := df.Tree(u)
		if err != nil {
			continue
		}
		if idx := tr.Innermost(pc); idx >= 0 {
			t = tr
			for i := idx; i >= 0 && len(chain) < 1024; i = int(tr.Dies[i].Parent) {
				d := &tr.Dies[i]
				if d.Tag == dwarf.TagInlinedSubroutine || d.Tag == dwarf.TagSubprogram {
					chain = append(chain, i)
					if d.Tag == dwarf.TagSubprogram {
						break
					}
				}
			}
			break
		}
	}
	if t == nil || level < 0 || level >= len(chain) {
		return nil, variables.ErrNoScope
	}
	cache := map[int]*variables.UnitCtx{}
	dfu := t.Df
	scopeOff := uint64(t.Dies[chain[level]].Off)
	uc, err := variables.UnitCtxAt(dfu, scopeOff, cache)
	if err != nil {
		return nil, err
	}
	vars, scope, err := uc.ScopeVars(scopeOff, pc)
	if err != nil {
		return nil, err
	}
	if scope.Origin != 0 {
		vars = variables.InheritAbstract(dfu, vars, scope.Origin, cache)
	}
	ev := &variables.ValueEval{Df: dfu, Uc: uc, Pc: pc, Bias: bias, Fs: fs, Cache: cache,
		Cplus: variables.CPlusPlus(uc.Top.Lang)}
	subOff := uint64(t.Dies[chain[len(chain)-1]].Off)
	if suc, err := variables.UnitCtxAt(dfu, subOff, cache); err == nil {
		if sub, _, ok := suc.ReadDIE(subOff); ok {
			ev.FrameBaseAttr, ev.FbUnit = sub.FrameBase, suc
		}
	}
	var args, locals []variables.Value
	for _, v := range vars {
		val := ev.Value(v)
		if val.Name == "" {
			continue // gdb lists only named variables
		}
		if val.Argument {
			args = append(args, val)
		} else {
			locals = append(locals, val)
		}
	}
	return append(args, locals...), nil
}
