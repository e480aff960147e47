package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"sync"

	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfline"
	"github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"
	"github.com/faultline-dev/faultline/analysis/debuginfo/elfsym"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
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
	// Main says the function's DIE has DW_AT_main_subprogram: it is the
	// program's main function (Symbols.Main).
	Main bool
}

// Symbols symbolizes link-time addresses of one module (its binary and an
// optional separate debug file). It is safe for concurrent use.
type Symbols struct {
	binary, debug *object.Object

	dwarfOnce sync.Once
	dwarf     *dwarfreader.DwarfFile
	dwarfErr  error

	symOnce sync.Once
	binSyms *elfsym.AddrIndex // the binary's .symtab, or .dynsym when stripped
	dbgSyms *elfsym.AddrIndex // the separate debug file's (or MiniDebugInfo's) .symtab
	dynOnce sync.Once
	byName  []*elfsym.SymbolTable // nameTables

	hashOnce sync.Once
	hash     *elfsym.DynHash // the binary's .gnu.hash or .hash (gnuhash.go)
	library  bool            // the binary is a shared library

	mainOnce sync.Once
	main     *Main // mainfunc.go

	// FindSupplementary, when set before the first lookup, finds the dwz
	// file the debug file at debugPath names (debugfile.Locator's
	// FindSupplementary): the path, or "" and what was tried.
	FindSupplementary func(debugPath, name string, buildID []byte) (path string, tried []string)
}

// NewSymbols returns the symbolizer for a module. debug may be nil or the
// same object as binary.
func NewSymbols(binary, debug *object.Object) *Symbols {
	if debug == nil {
		debug = binary
	}
	return &Symbols{binary: binary, debug: debug}
}

func (s *Symbols) dwarfData() *dwarfreader.DwarfFile {
	s.dwarfOnce.Do(func() {
		if s.debug != nil {
			s.dwarf, s.dwarfErr = dwarfreader.OpenDWARF(s.debug)
		}
		if s.dwarf == nil && s.binary != nil && s.binary != s.debug {
			s.dwarf, s.dwarfErr = dwarfreader.OpenDWARF(s.binary)
		}
		if s.dwarf != nil {
			s.dwarf.Dwo = dwarfreader.NewDWOSearch(s.binary, s.debug)
			if find := s.FindSupplementary; find != nil {
				path := s.dwarf.Obj.Path()
				s.dwarf.SetSupplementaryFinder(func(name string, id []byte) (string, []string) { return find(path, name, id) })
			}
		}
	})
	return s.dwarf
}

// Close releases the files the symbolizer opened itself (split DWARF's
// .dwo files); the binary and debug objects belong to the caller.
func (s *Symbols) Close() {
	if s != nil && s.dwarf != nil {
		s.dwarf.Dwo.Close()
		s.dwarf.CloseSupplementary()
	}
}

// SupplementaryError says why names and DIEs the module's DWARF keeps in a
// dwz supplementary file could not be read, once a lookup needed them (its
// frames show ?? where gdb has a name): nil when none was needed or it was
// read.
func (s *Symbols) SupplementaryError() error {
	if s == nil || s.dwarf == nil {
		return nil
	}
	return s.dwarf.SupplementaryError()
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
// debug file's .symtab. Lookups scan the tables until there are enough of
// them to pay for sorting (elfsym.AddrIndex); names are read when a symbol
// is returned.
func (s *Symbols) symbols() {
	s.symOnce.Do(func() {
		if s.binary != nil {
			s.binSyms = elfsym.NewAddrIndex(func() *elfsym.SymbolTable {
				t := elfsym.ReadSymbolsTable(s.binary, s.binary.Elf.Section(".symtab"))
				if !t.HasCode() {
					t = elfsym.ReadSymbolsTable(s.binary, s.binary.Elf.Section(".dynsym"))
				}
				return t
			}, elfsym.PLTSections(s.binary), s.sortedBinarySymbols)
		}
		var dbg *object.Object
		if s.debug != s.binary {
			dbg = s.debug
		} else if s.binary != nil && s.binary.Elf.Section(".symtab") == nil {
			// Stripped without a debug file: gdb then reads MiniDebugInfo
			// as a separate debug object's symbol table.
			dbg, _ = s.binary.MiniDebugInfo()
		}
		if dbg != nil {
			cached := dbg == s.debug
			s.dbgSyms = elfsym.NewAddrIndex(func() *elfsym.SymbolTable { return elfsym.ReadSymbolsTable(dbg, dbg.Elf.Section(".symtab")) }, nil,
				func() *elfsym.SymbolTable {
					if !cached {
						return elfsym.ReadSymbols(dbg, ".symtab")
					}
					return elfsym.CachedSymbols(dbg, "dbg", func() *elfsym.SymbolTable { return elfsym.ReadSymbols(dbg, ".symtab") })
				})
		}
	})
}

// sortedBinarySymbols is the binary's table sorted, with its name@plt
// stubs, read from the index cache when an earlier process built it.
func (s *Symbols) sortedBinarySymbols() *elfsym.SymbolTable {
	return elfsym.CachedSymbols(s.binary, "bin", func() *elfsym.SymbolTable {
		t := elfsym.ReadSymbols(s.binary, ".symtab")
		if t == nil || len(t.Syms) == 0 {
			t = elfsym.ReadSymbols(s.binary, ".dynsym")
		}
		return t.WithSynthetic(s.binary, elfsym.PltSymbols(s.binary))
	})
}

// nameTables are the tables names are looked up in, in gdb's order: the
// binary's .symtab (its .dynsym when it has none), the debug file's (or
// MiniDebugInfo's) .symtab, then the binary's .dynsym, which is asked
// through its hash table when it has one. None of them is read until a
// name is looked up, and no address index is built for them.
func (s *Symbols) nameTables() []*elfsym.SymbolTable {
	s.dynOnce.Do(func() {
		table := func(o *object.Object, name string) *elfsym.SymbolTable {
			if o == nil {
				return nil
			}
			return elfsym.ReadSymbolsTable(o, o.Elf.Section(name))
		}
		bin := table(s.binary, ".symtab")
		if bin == nil || len(bin.Raw) <= bin.EntSize {
			bin = table(s.binary, ".dynsym")
		}
		var dbg *elfsym.SymbolTable
		if s.debug != s.binary {
			dbg = table(s.debug, ".symtab")
		} else if s.binary != nil && s.binary.Elf.Section(".symtab") == nil {
			if mini, _ := s.binary.MiniDebugInfo(); mini != nil {
				dbg = table(mini, ".symtab")
			}
		}
		dyn := &elfsym.SymbolTable{Dynamic: true}
		if s.hashTable() == nil {
			dyn = table(s.binary, ".dynsym")
		}
		s.byName = []*elfsym.SymbolTable{bin, dbg, dyn}
	})
	return s.byName
}

// hashTable is the binary's dynamic symbol hash table, nil if it has none.
func (s *Symbols) hashTable() *elfsym.DynHash {
	s.hashOnce.Do(func() {
		s.hash = elfsym.OpenDynHash(s.binary)
		s.library = s.hash != nil && isSharedLibrary(s.binary)
	})
	return s.hash
}

// libraryHash is the hash table of a shared library, whose exported
// symbols are all its global ones; nil for an executable or without one.
func (s *Symbols) libraryHash() *elfsym.DynHash {
	if h := s.hashTable(); s.library {
		return h
	}
	return nil
}

// isSharedLibrary reports whether o is a shared library rather than an
// executable (ET_EXEC, or a PIE: DF_1_PIE, or an interpreter without a
// DT_SONAME as older linkers wrote PIEs).
func isSharedLibrary(o *object.Object) bool {
	f := o.Elf
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
func (s *Symbols) symbolAt(pc uint64) *elfsym.ElfSymbol {
	s.symbols()
	a, t := s.binSyms.Lookup(pc)
	if b, tb := s.dbgSyms.Lookup(pc); a == nil || (b != nil && b.Addr > a.Addr) {
		a, t = b, tb
	}
	if a == nil {
		return nil
	}
	named := *a
	named.Name = t.Name(a)
	return &named
}

// SymbolAddr returns the link-time address of a symbol by its (mangled) name.
func (s *Symbols) SymbolAddr(name string) (uint64, bool) {
	h := s.hashTable()
	for _, t := range s.nameTables() {
		if t != nil && t.Dynamic && h != nil {
			if a, _, ok := h.Global(name); ok {
				return a, true
			}
		} else if a, _, ok := t.ByName(name); ok {
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
		line    dwarfline.LineResult
		compDir string
	)
	if df != nil {
		units := df.UnitsFor(pc)
		var lineTree *dwarfreader.UnitTree
		for _, u := range units {
			t, err := df.Tree(u)
			if err != nil {
				continue
			}
			if lineTree == nil {
				lineTree = t
			}
			if idx := t.Innermost(pc); idx >= 0 {
				return s.inlineChain(t, idx, pc)
			}
		}
		if lineTree != nil {
			compDir = lineTree.CompDir
			if lt, _ := lineTree.LineTable(); lt != nil {
				line = lt.Lookup(pc)
			}
		}
	}
	// No subprogram covers pc: gdb names the frame from the minimal symbol
	// but still prints the line table's location (assembly sources).
	sym := s.symbolAt(pc)
	if sym == nil {
		if line.Ok {
			return []Location{{File: line.File, CompDir: compDir, Line: line.Line, Column: line.Column}}
		}
		return nil
	}
	loc := Location{Function: demangleFull(sym.Name), FuncLow: sym.Addr}
	if line.Ok {
		loc.File, loc.CompDir, loc.Line, loc.Column = line.File, compDir, line.Line, line.Column
	}
	return []Location{loc}
}

// inlineChain builds the Locations from the innermost DIE idx outwards to
// its subprogram.
func (s *Symbols) inlineChain(t *dwarfreader.UnitTree, idx int, pc uint64) []Location {
	var lt *dwarfline.LineTable
	lt, _ = t.LineTable()
	var locs []Location
	var prev *dwarfreader.Die
	for i := idx; i >= 0 && len(locs) < 1024; i = int(t.Dies[i].Parent) {
		d := &t.Dies[i]
		if d.Tag != dwarf.TagInlinedSubroutine && d.Tag != dwarf.TagSubprogram {
			continue
		}
		ref := dwarfreader.DieRef{T: t, Idx: i}
		loc := Location{Function: functionName(ref), FuncLow: d.Low, FromDWARF: true,
			Inlined: d.Tag == dwarf.TagInlinedSubroutine, CompDir: t.CompDir, Main: marksMain(ref)}
		if prev == nil {
			if lt != nil {
				if r := lt.Lookup(pc); r.Ok {
					loc.File, loc.Line, loc.Column = r.File, r.Line, r.Column
				}
			}
		} else {
			if lt != nil {
				loc.File, _ = lt.FileNameAt(uint64(prev.CallFile))
			}
			loc.Line, loc.Column = int(prev.CallLine), int(prev.CallCol)
		}
		if loc.Function == "" {
			if sym := s.symbolAt(pc); sym != nil && !loc.Inlined {
				loc.Function = demangleFull(sym.Name)
			}
		}
		locs = append(locs, loc)
		prev = d
		if d.Tag == dwarf.TagSubprogram {
			break
		}
	}
	return locs
}
