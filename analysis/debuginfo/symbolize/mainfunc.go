package symbolize

import "github.com/faultline-dev/faultline/analysis/debuginfo/dwarfreader"

// Main is the function a module's DWARF marks as the program's main
// (DW_AT_main_subprogram: Fortran's main program, Rust's fn main). gdb's
// main_name() is its name (symtab.c find_main_name takes it from the DWARF
// index of the first objfile that has one, before trying Go's main.main
// and C's main), and gdb's backtrace ends at its frame (frame.c
// get_prev_frame, inside_main_func) unless the name finds something else.
type Main struct {
	// Name is the function's name as gdb prints it ("rust_names::main",
	// "MAIN__", "solver").
	Name string
	// Hidden is set when gdb's lookup of Name (lookup_symbol, global
	// symbols first) finds a namespace instead of the function: rustc emits
	// a namespace named like fn main, holding the items declared inside it
	// (its closures), while fn main itself is a static symbol. gdb 13's
	// inside_main_func then recognises no frame as main's, and its
	// backtrace goes on past main, and past C's main too.
	Hidden bool
}

// Main returns the module's main function, if its DWARF marks one.
func (s *Symbols) Main() (Main, bool) {
	s.mainOnce.Do(func() {
		df := s.dwarfData()
		if df == nil {
			return
		}
		r, ok := df.MainSubprogram()
		if !ok {
			return
		}
		m := Main{Name: functionName(r)}
		if r.T.Lang == langRust {
			m.Hidden = df.HasNamespace(dwarfreader.ScopePath(r))
		}
		s.main = &m
	})
	if s.main == nil {
		return Main{}, false
	}
	return *s.main, true
}

// marksMain reports whether the DIE, or one it refers to through
// DW_AT_specification or DW_AT_abstract_origin, has DW_AT_main_subprogram
// (gdb's DWARF indexer reads the attribute along the same chain).
func marksMain(r dwarfreader.DieRef) bool {
	for _, c := range attrChain(r) {
		if c.Die().MainSubprogram {
			return true
		}
	}
	return false
}
