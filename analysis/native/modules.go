package native

import (
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/faultline-dev/faultline/analysis/model"
)

// auxv types (linux/include/uapi/linux/auxvec.h).
const (
	atEntry       = 9
	atSysinfoEHdr = 33
)

// loadModules builds the module list from NT_FILE (plus the vDSO) and finds
// each object's file and debug file.
func (p *Process) loadModules() {
	core := p.core
	order := fileMappings(core)
	entry, _ := core.AuxVal(atEntry)
	for _, g := range order {
		if !p.looksLikeELF(g.path, g.base) {
			continue
		}
		m := &module{path: g.path, lo: g.lo, hi: g.hi, base: g.base}
		m.isExe = entry != 0 && entry >= g.lo && entry < g.hi
		m.buildID = core.BuildIDAt(g.base)
		p.locate(m)
		p.modules = append(p.modules, m)
		if m.isExe {
			p.exe = m
		}
	}
	if len(core.Files) == 0 {
		p.loadModulesFromLinkMap(entry)
	}
	if vdso, ok := core.AuxVal(atSysinfoEHdr); ok && vdso != 0 {
		p.addVDSO(vdso)
	}
	sortModules(p.modules)
	p.fetchMissing()
	p.reportMissingBinaries()
}

// sortModules orders modules by start address, as moduleAt searches them.
func sortModules(mods []*module) {
	sort.SliceStable(mods, func(i, j int) bool { return mods[i].lo < mods[j].lo })
}

// modelModules renders the module list.
func (p *Process) modelModules() []model.Module {
	out := make([]model.Module, 0, len(p.modules))
	for _, m := range p.modules {
		mm := model.Module{Path: m.path, BuildID: hex.EncodeToString(m.buildID), Lo: m.lo, Hi: m.hi, Bias: m.bias,
			Start: hexAddr(m.lo), End: hexAddr(m.hi), Symbols: m.symbolsKind()}
		if m.dbg != nil && m.dbg != m.obj {
			mm.DebugFile = m.dbg.Path()
		}
		if m.file != m.path {
			mm.File = m.file
		}
		out = append(out, mm)
	}
	return out
}

func hexAddr(v uint64) string { return fmt.Sprintf("%#x", v) }

func hexOrNone(b []byte) string {
	if len(b) == 0 {
		return "unknown"
	}
	return hex.EncodeToString(b)
}
