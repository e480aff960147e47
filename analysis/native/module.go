package native

import (
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/debuginfo/symbolize"
	"github.com/faultline-dev/faultline/analysis/unwind"
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
	// locator finds the files the debug info refers to later (a dwz
	// supplementary file); set where the binary is attached.
	locator *debugfile.Locator
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
		if m.locator != nil {
			m.syms.FindSupplementary = m.locator.FindSupplementary
		}
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
