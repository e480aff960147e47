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

// Module loading is one pipeline, run once per core (loadModules):
//
//  1. discover (discover.go, linkmap.go): which ELF objects the process had
//     mapped, and where: one module per load of a file in the core's NT_FILE
//     note; without NT_FILE, the executable at the address AT_ENTRY says and
//     each object on the dynamic linker's link_map list; then the vDSO
//     (AT_SYSINFO_EHDR), whose image is in the core itself.
//  2. locate (locate.go): each module's file and its debug file, asking the
//     sources listed there in their order.
//  3. attach (attach.go): open the file (or take it from the Pool, when an
//     earlier core of the program opened it), compute the load bias, open
//     the debug file. Symbols and unwind tables are built when a stack first
//     reaches the module (module.go).
//
// debuginfod, the last source of step 2, is asked for every module still
// missing a file at once, after the local lookups (debuginfod.go); what no
// source had becomes one problem per module (missing.go).
func (p *Process) loadModules() {
	entry, _ := p.core.AuxVal(atEntry)
	for _, m := range p.discoverMapped(entry) {
		p.locate(m)
		p.modules = append(p.modules, m)
		if m.isExe {
			p.exe = m
		}
	}
	if len(p.core.Files) == 0 {
		p.loadModulesFromLinkMap(entry)
	}
	if vdso, ok := p.core.AuxVal(atSysinfoEHdr); ok && vdso != 0 {
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
