package debuginfo

import (
	"debug/dwarf"
	"debug/elf"
	"sync"
)

// Location is one level of the inline chain at a pc, as one line of gdb's `bt`.
type Location struct {
	Function string
	File     string
	// CompDir is the unit's DW_AT_comp_dir (relative Files are under it).
	CompDir string
	Line    int
	Column  int
	// Inlined is set on every level but the outermost (the physical function).
	Inlined bool
	// FuncLow is the start of the symbol or subprogram (or inlined instance).
	FuncLow uint64
	// FromDWARF says the function name came from DWARF rather than a symbol table.
	FromDWARF bool
}

// Symbols symbolizes link-time addresses of one module (its binary and an
// optional separate debug file). It is safe for concurrent use.
type Symbols struct {
	binary, debug *Object

	dwarfOnce sync.Once
	dwarf     *dwarfFile
	dwarfErr  error

	symOnce sync.Once
	binSyms *symbolTable // the binary's .symtab, or .dynsym when stripped
	dbgSyms *symbolTable // the separate debug file's .symtab
	dynOnce sync.Once
	byName  []*symbolTable // nameTables

	hashOnce sync.Once
	hash     *dynHash // the binary's .gnu.hash or .hash (gnuhash.go)
	library  bool     // the binary is a shared library
}

// NewSymbols returns the symbolizer for a module. debug may be nil or the
// same object as binary.
func NewSymbols(binary, debug *Object) *Symbols {
	if debug == nil {
		debug = binary
	}
	return &Symbols{binary: binary, debug: debug}
}

func (s *Symbols) dwarfData() *dwarfFile {
	s.dwarfOnce.Do(func() {
		if s.debug != nil {
			s.dwarf, s.dwarfErr = openDWARF(s.debug)
		}
		if s.dwarf == nil && s.binary != nil && s.binary != s.debug {
			s.dwarf, s.dwarfErr = openDWARF(s.binary)
		}
		if s.dwarf != nil {
			s.dwarf.dwo = newDWOSearch(s.binary, s.debug)
		}
	})
	return s.dwarf
}

// Close releases the files the symbolizer opened itself (split DWARF's
// .dwo files); the binary and debug objects belong to the caller.
func (s *Symbols) Close() {
	if s != nil && s.dwarf != nil {
		s.dwarf.dwo.close()
	}
}

// DWARFError reports why the module's DWARF could not be opened, if it could not.
func (s *Symbols) DWARFError() error {
	s.dwarfData()
	return s.dwarfErr
}

// HasDWARF reports whether the module has DWARF debugging information.
func (s *Symbols) HasDWARF() bool { return s.dwarfData() != nil }

// symbols reads the minimal symbols the way gdb does per objfile: the
// binary's .symtab, or its .dynsym when it is stripped; and the separate
// debug file's .symtab. Only the address index is built (elfsym.go); names
// are read when a symbol is returned.
func (s *Symbols) symbols() {
	s.symOnce.Do(func() {
		s.binSyms = cachedSymbols(s.binary, "bin", func() *symbolTable {
			t := readSymbols(s.binary, ".symtab")
			if t == nil || len(t.syms) == 0 {
				t = readSymbols(s.binary, ".dynsym")
			}
			return t.withSynthetic(s.binary, pltSymbols(s.binary))
		})
		if s.debug != s.binary {
			s.dbgSyms = cachedSymbols(s.debug, "dbg", func() *symbolTable { return readSymbols(s.debug, ".symtab") })
		} else if s.binary != nil && s.binary.elf.Section(".symtab") == nil {
			// Stripped without a debug file: gdb then reads MiniDebugInfo
			// as a separate debug object's symbol table.
			if mini, _ := s.binary.MiniDebugInfo(); mini != nil {
				s.dbgSyms = readSymbols(mini, ".symtab")
			}
		}
	})
}

// nameTables are the tables names are looked up in, in gdb's order: the
// binary's .symtab (its .dynsym when it has none), the debug file's (or
// MiniDebugInfo's) .symtab, then the binary's .dynsym, which is asked
// through its hash table when it has one. None of them is read until a
// name is looked up, and no address index is built for them.
func (s *Symbols) nameTables() []*symbolTable {
	s.dynOnce.Do(func() {
		table := func(o *Object, name string) *symbolTable {
			if o == nil {
				return nil
			}
			return readSymbolsTable(o, o.elf.Section(name))
		}
		bin := table(s.binary, ".symtab")
		if bin == nil || len(bin.raw) <= bin.entSize {
			bin = table(s.binary, ".dynsym")
		}
		var dbg *symbolTable
		if s.debug != s.binary {
			dbg = table(s.debug, ".symtab")
		} else if s.binary != nil && s.binary.elf.Section(".symtab") == nil {
			if mini, _ := s.binary.MiniDebugInfo(); mini != nil {
				dbg = table(mini, ".symtab")
			}
		}
		dyn := &symbolTable{dynamic: true}
		if s.hashTable() == nil {
			dyn = table(s.binary, ".dynsym")
		}
		s.byName = []*symbolTable{bin, dbg, dyn}
	})
	return s.byName
}

// hashTable is the binary's dynamic symbol hash table, nil if it has none.
func (s *Symbols) hashTable() *dynHash {
	s.hashOnce.Do(func() {
		s.hash = openDynHash(s.binary)
		s.library = s.hash != nil && isSharedLibrary(s.binary)
	})
	return s.hash
}

// libraryHash is the hash table of a shared library, whose exported
// symbols are all its global ones; nil for an executable or without one.
func (s *Symbols) libraryHash() *dynHash {
	if h := s.hashTable(); s.library {
		return h
	}
	return nil
}

// isSharedLibrary reports whether o is a shared library rather than an
// executable (ET_EXEC, or a PIE: DF_1_PIE, or an interpreter without a
// DT_SONAME as older linkers wrote PIEs).
func isSharedLibrary(o *Object) bool {
	f := o.elf
	if f.Type != elf.ET_DYN {
		return false
	}
	if v, err := f.DynValue(elf.DT_FLAGS_1); err == nil && len(v) > 0 && elf.DynFlag1(v[0])&elf.DF_1_PIE != 0 {
		return false
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			names, err := f.DynString(elf.DT_SONAME)
			return err == nil && len(names) > 0
		}
	}
	return true
}

// symbolAt is the symbol-table symbol for pc, its name read. Like gdb
// across an objfile and its separate debug objfile, the higher-addressed
// candidate wins and the binary's wins a tie.
func (s *Symbols) symbolAt(pc uint64) *elfSymbol {
	s.symbols()
	a, b := s.binSyms.lookup(pc), s.dbgSyms.lookup(pc)
	t := s.binSyms
	if a == nil || (b != nil && b.addr > a.addr) {
		a, t = b, s.dbgSyms
	}
	if a == nil {
		return nil
	}
	named := *a
	named.name = t.name(a)
	return &named
}

// SymbolAddr returns the link-time address of a symbol by its (mangled) name.
func (s *Symbols) SymbolAddr(name string) (uint64, bool) {
	h := s.hashTable()
	for _, t := range s.nameTables() {
		if t != nil && t.dynamic && h != nil {
			if a, _, ok := h.global(name); ok {
				return a, true
			}
		} else if a, ok := t.names()[name]; ok {
			return a, true
		}
	}
	return 0, false
}

// Lookup returns the inline chain at pc (a link-time address; for return
// addresses the caller has already subtracted 1), innermost first: every
// DW_TAG_inlined_subroutine containing pc from the innermost out, then the
// DW_TAG_subprogram. Level 0 takes its file, line and column from the line
// table row covering pc; level k+1 from level k's DW_AT_call_file,
// DW_AT_call_line and DW_AT_call_column. Without DWARF for pc it returns one
// Location named from .symtab (or .dynsym), with the line table's file and
// line if a unit covers pc; nil if nothing covers pc.
func (s *Symbols) Lookup(pc uint64) []Location {
	return s.lookupDWARF(pc)
}

func (s *Symbols) lookupDWARF(pc uint64) (locs []Location) {
	df := s.dwarfData()
	var (
		line    lineResult
		compDir string
	)
	if df != nil {
		units := df.unitsFor(pc)
		var lineTree *unitTree
		for _, u := range units {
			t, err := df.tree(u)
			if err != nil {
				continue
			}
			if lineTree == nil {
				lineTree = t
			}
			if idx := t.innermost(pc); idx >= 0 {
				return s.inlineChain(t, idx, pc)
			}
		}
		if lineTree != nil {
			compDir = lineTree.compDir
			if lt, _ := lineTree.lineTable(); lt != nil {
				line = lt.lookup(pc)
			}
		}
	}
	// No subprogram covers pc: gdb names the frame from the minimal symbol
	// but still prints the line table's location (assembly sources).
	sym := s.symbolAt(pc)
	if sym == nil {
		if line.ok {
			return []Location{{File: line.file, CompDir: compDir, Line: line.line, Column: line.column}}
		}
		return nil
	}
	loc := Location{Function: demangleFull(sym.name), FuncLow: sym.addr}
	if line.ok {
		loc.File, loc.CompDir, loc.Line, loc.Column = line.file, compDir, line.line, line.column
	}
	return []Location{loc}
}

// inlineChain builds the Locations from the innermost DIE idx outwards to
// its subprogram.
func (s *Symbols) inlineChain(t *unitTree, idx int, pc uint64) []Location {
	var lt *lineTable
	lt, _ = t.lineTable()
	var locs []Location
	var prev *die
	for i := idx; i >= 0 && len(locs) < 1024; i = int(t.dies[i].parent) {
		d := &t.dies[i]
		if d.tag != dwarf.TagInlinedSubroutine && d.tag != dwarf.TagSubprogram {
			continue
		}
		loc := Location{Function: functionName(dieRef{t, i}), FuncLow: d.low, FromDWARF: true,
			Inlined: d.tag == dwarf.TagInlinedSubroutine, CompDir: t.compDir}
		if prev == nil {
			if lt != nil {
				if r := lt.lookup(pc); r.ok {
					loc.File, loc.Line, loc.Column = r.file, r.line, r.column
				}
			}
		} else {
			if lt != nil {
				loc.File, _ = lt.fileNameAt(uint64(prev.callFile))
			}
			loc.Line, loc.Column = int(prev.callLine), int(prev.callCol)
		}
		if loc.Function == "" {
			if sym := s.symbolAt(pc); sym != nil && !loc.Inlined {
				loc.Function = demangleFull(sym.name)
			}
		}
		locs = append(locs, loc)
		prev = d
		if d.tag == dwarf.TagSubprogram {
			break
		}
	}
	return locs
}
