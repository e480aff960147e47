package analysis

import (
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/debuginfo/symbolize"
)

// Extent is the source lines a frame's function spans as the module's
// DWARF says: DW_AT_decl_line to the last line its code covers in the
// line table, for that inline level (symbolize.Extent).
type Extent = symbolize.Extent

// FunctionExtent returns the extent of frame index of thread tid in c,
// reading the frame's module (its file and separate debug file, as the
// model records them) again. ok is false when the module, its DWARF or
// the function's declaration is not there.
func FunctionExtent(c *Crash, tid, index int) (Extent, bool) {
	if c == nil {
		return Extent{}, false
	}
	t := c.Thread(tid)
	if t == nil {
		return Extent{}, false
	}
	pos := -1
	for i := range t.Frames {
		if t.Frames[i].Index == index {
			pos = i
		}
	}
	if pos < 0 || t.Frames[pos].Module == "" {
		return Extent{}, false
	}
	f := t.Frames[pos]
	var m *Module
	for i := range c.Modules {
		if c.Modules[i].Path == f.Module {
			m = &c.Modules[i]
		}
	}
	if m == nil {
		return Extent{}, false
	}
	syms, closeSyms := openModuleSymbols(m)
	if syms == nil {
		return Extent{}, false
	}
	defer closeSyms()
	// Inline levels of one pc are consecutive, innermost first; the
	// outermost level of a caller's pc is a return address, looked up one
	// byte back as the unwinder did (unless a signal frame is below it).
	first := pos
	for first > 0 && t.Frames[first-1].Addr == f.Addr && !t.Frames[first-1].Signal {
		first--
	}
	look := f.Addr - m.Bias
	if first > 0 && !t.Frames[first-1].Signal && look > 0 {
		look--
	}
	ext := syms.FunctionExtents(look)
	if level := pos - first; level < len(ext) && ext[level].DeclLine > 0 {
		return ext[level], true
	}
	return Extent{}, false
}

// openModuleSymbols opens a module's binary and debug file for symbol
// queries; the returned function closes them.
func openModuleSymbols(m *Module) (*symbolize.Symbols, func()) {
	path := m.File
	if path == "" {
		path = m.Path
	}
	bin, err := object.OpenObject(path)
	if err != nil {
		return nil, nil
	}
	var dbg *object.Object
	if m.DebugFile != "" && m.DebugFile != path {
		dbg, _ = object.OpenObject(m.DebugFile)
	}
	syms := symbolize.NewSymbols(bin, dbg)
	return syms, func() {
		syms.Close()
		if dbg != nil {
			dbg.Close()
		}
		bin.Close()
	}
}
