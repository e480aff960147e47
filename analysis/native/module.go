package native

import (
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/debuginfo/symbolize"
	"github.com/faultline-dev/faultline/analysis/elfcore"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/unwind"
)

// auxv types (linux/include/uapi/linux/auxvec.h).
const (
	atEntry       = 9
	atSysinfoEHdr = 33
)

// module is one mapped ELF object and what was found for it on disk.
type module struct {
	path    string // as mapped in the core
	file    string // the matching file on disk ("" if none)
	lo, hi  uint64
	base    uint64 // start of the mapping of file offset 0
	bias    uint64 // runtime address - link-time address
	buildID []byte // from the core's copy of its headers (else from the file)
	isExe   bool
	// notFound says what was tried when no file matched (reported once,
	// after debuginfod had its chance).
	notFound []string
	// fromLinkMap: found through r_debug (bias is l_addr, ld is l_ld).
	fromLinkMap bool
	ld          uint64
	fetchErr    error // why debuginfod could not give the debug file
	// fetchDebug, when set, asks debuginfod for the debug file the first
	// time the module is used (debugfetch.go).
	fetchDebug func(*module)

	obj *object.Object // the binary (nil if not found)
	dbg *object.Object // its debug file (may equal obj, or be nil)

	once sync.Once
	syms *symbolize.Symbols
	uw   *unwind.Module
	// pooled is the Pool's entry for obj: the pool, not the module, closes it.
	pooled *pooledObject
}

func (m *module) close() {
	if m.pooled != nil {
		return
	}
	m.syms.Close()
	if m.dbg != nil && m.dbg != m.obj {
		m.dbg.Close()
	}
	if m.obj != nil {
		m.obj.Close()
	}
}

// symbols returns the module's symbolizer, building it on first use.
func (m *module) symbols() *symbolize.Symbols {
	m.init()
	return m.syms
}

func (m *module) unwindInfo() *unwind.Module {
	m.init()
	return m.uw
}

func (m *module) init() {
	m.once.Do(func() {
		m.uw = &unwind.Module{Name: m.path, Lo: m.lo, Hi: m.hi, Bias: m.bias}
		if m.obj == nil || m.initFromPool() {
			return
		}
		defer m.initDone()
		if m.fetchDebug != nil {
			m.fetchDebug(m)
		}
		m.syms = symbolize.NewSymbols(m.obj, m.dbg)
		if m.isExe && m.obj.ELF() != nil {
			m.uw.Entry = m.obj.ELF().Entry
		}
		sec := func(o *object.Object, name string) unwind.Section {
			if o == nil {
				return unwind.Section{}
			}
			d, a, ok := o.Section(name)
			if !ok {
				return unwind.Section{}
			}
			return unwind.Section{Data: d, Addr: a, Index: object.FrameIndex(o, name, d)}
		}
		m.uw.EHFrame = sec(m.obj, ".eh_frame")
		m.uw.EHFrameHdr = sec(m.obj, ".eh_frame_hdr")
		m.uw.DebugFrame = sec(m.obj, ".debug_frame")
		if m.uw.DebugFrame.Data == nil && m.dbg != nil {
			m.uw.DebugFrame = sec(m.dbg, ".debug_frame")
		}
	})
}

func (m *module) symbolsKind() string {
	s := m.symbols()
	switch {
	case s == nil:
		return "none"
	case s.HasDWARF():
		return "dwarf"
	default:
		return "symtab"
	}
}

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

// looksLikeELF reports whether a mapping is an ELF object: by the header the
// core dumped at its start, else by the file on disk.
func (p *Process) looksLikeELF(path string, base uint64) bool {
	var magic [4]byte
	if n, _ := p.core.ReadMemory(base, magic[:]); n == 4 {
		return string(magic[:]) == "\x7fELF"
	}
	f, err := os.Open(path)
	if err != nil {
		// Unknown: keep it only if it is named like a shared object or program.
		return strings.Contains(filepath.Base(path), ".so") || strings.HasPrefix(path, "/")
	}
	defer f.Close()
	if n, _ := f.Read(magic[:]); n != 4 {
		return false
	}
	return string(magic[:]) == "\x7fELF"
}

// locate finds the module's file and debug file and computes its load
// bias. When no file matches, the module keeps what was tried in
// m.notFound; fetchMissing may still find it (debuginfod) before
// reportMissing turns that into one problem.
func (p *Process) locate(m *module) {
	if m.isExe && p.opt.Exe != "" {
		p.locateGivenExe(m)
		return
	}
	p.locateMapped(m)
}

// locateMapped finds module m's file from the path the core maps it from.
func (p *Process) locateMapped(m *module) {
	file, probs := p.locator.FindBinary(m.path, m.buildID)
	if file == "" {
		m.notFound = probs
		m.bias = m.base
		return
	}
	p.attachBinary(m, file)
}

// attachBinary opens file as module m's binary, computes the load bias
// from where its first page is mapped, and finds its debug file.
func (p *Process) attachBinary(m *module, file string) {
	if p.fromPool(m, file) {
		return
	}
	obj, err := object.OpenObject(file)
	if err != nil {
		p.problem(m.path, "cannot read %s: %v", file, err)
		m.bias = m.base
		return
	}
	m.file, m.obj = file, obj
	if m.buildID == nil {
		m.buildID = obj.BuildID()
	}
	p.setBias(m)
	p.toPool(m, p.findDebug(m, file, obj))
}

// setBias computes module m's load bias from where its binary's first
// page is mapped.
func (p *Process) setBias(m *module) {
	if vaddr, off, ok := m.obj.FirstLoadVaddr(); ok {
		m.bias = m.base - (vaddr-off)&^0xfff
	} else {
		m.bias = m.base
	}
}

// findDebug finds and opens the debug file of module m, whose binary obj
// was opened from file. It returns the problems it reported.
func (p *Process) findDebug(m *module, file string, obj *object.Object) []string {
	dbgPath, probs := p.locator.FindDebug(file, obj)
	switch {
	case dbgPath == "":
	case dbgPath == file:
		m.dbg = obj
	default:
		d, err := object.OpenObject(dbgPath)
		if err != nil {
			probs = append(probs, fmt.Sprintf("cannot read debug file %s: %v", dbgPath, err))
		} else {
			m.dbg = d
		}
	}
	for _, pr := range probs {
		p.problem(m.path, "%s", pr)
	}
	return probs
}

// addExeWithoutNTFile maps the executable file exe at the address the
// entry point (AT_ENTRY) says.
func (p *Process) addExeWithoutNTFile(exe string, entry uint64) {
	obj, err := object.OpenObject(exe)
	if err != nil {
		p.problem(exe, "cannot read: %v", err)
		return
	}
	e := obj.ELF()
	m := &module{path: exe, file: exe, obj: obj, isExe: true, buildID: obj.BuildID()}
	m.bias = entry - e.Entry
	for _, ph := range e.Progs {
		if ph.Type == elf.PT_LOAD {
			if m.lo == 0 || ph.Vaddr+m.bias < m.lo {
				m.lo = ph.Vaddr + m.bias
			}
			m.hi = max(m.hi, ph.Vaddr+ph.Memsz+m.bias)
		}
	}
	m.base = m.lo
	p.findDebug(m, exe, obj)
	p.modules = append(p.modules, m)
	sortModules(p.modules)
	p.exe = m
}

// addVDSO adds the kernel's vDSO, whose image (and unwind info) is in the core.
func (p *Process) addVDSO(addr uint64) {
	var seg *elfcore.Segment
	for i := range p.core.Segments {
		s := &p.core.Segments[i]
		if addr >= s.Vaddr && addr < s.Vaddr+s.Filesz {
			seg = s
			break
		}
	}
	if seg == nil {
		return
	}
	size := min(seg.Vaddr+seg.Filesz-addr, 1<<20)
	data := make([]byte, size)
	if n, _ := p.core.ReadMemory(addr, data); uint64(n) != size {
		return
	}
	obj, err := object.NewObjectFromBytes("[vdso]", data)
	if err != nil {
		return
	}
	m := &module{path: "[vdso]", lo: addr, hi: seg.Vaddr + seg.Memsz, base: addr, obj: obj, buildID: obj.BuildID()}
	if vaddr, _, ok := obj.FirstLoadVaddr(); ok {
		m.bias = addr - vaddr
	} else {
		m.bias = addr
	}
	m.dbg = obj
	p.modules = append(p.modules, m)
}

func hexOrNone(b []byte) string {
	if len(b) == 0 {
		return "unknown"
	}
	return hex.EncodeToString(b)
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
