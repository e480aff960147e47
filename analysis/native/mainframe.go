package native

import "github.com/faultline-dev/faultline/analysis/model"

// Where gdb's backtrace ends: after the frame of the program's main
// function, "backtrace past-main" being off (frame.c get_prev_frame,
// inside_main_func). Which function that is, is gdb's main_name()
// (symtab.c find_main_name): the one the executable's DWARF marks
// DW_AT_main_subprogram (Fortran's main program, "MAIN__" or its name;
// Rust's fn main), else Go's main.main, else MAIN__ when the executable
// has that symbol (Debian's gdb), else C's main, looked up in the
// executable. So a Fortran or Rust stack ends at the language's main, not
// at the C main that calls it, and a Rust stack whose main gdb cannot find
// by its name (symbolize.Main.Hidden) goes on to _start, as gdb's does.

// endsAtMain reports whether the stack ends with the physical frame at pc,
// whose inline levels are levels.
func (s *symbolizer) endsAtMain(pc uint64, returnAddress bool, levels []model.Frame) bool {
	outer := levels[len(levels)-1]
	if outer.Inlined || outer.Function == "" {
		return false
	}
	if outer.Function == "main.main" {
		return true // Go (gdb's go_main_name)
	}
	m := s.p.moduleAt(pc)
	if m == nil || !m.isExe || m.symbols() == nil {
		return false
	}
	main, marked := m.symbols().Main()
	if marked {
		return !main.Hidden && s.mainAt[lookupKey(pc, returnAddress)]
	}
	if s.fortranMain(m) {
		return outer.Function == "MAIN__"
	}
	return outer.Function == "main"
}

// fortranMain reports whether the executable has a symbol MAIN__, the
// Fortran main program's: Debian's gdb (its patch gdb-fortran-main) then
// takes MAIN__ for main_name() even without DWARF, and so R, whose
// executable defines a MAIN__ stub for Fortran libraries, gets a backtrace
// that goes on past C's main to _start.
func (s *symbolizer) fortranMain(exe *module) bool {
	if s.hasMAIN == nil {
		_, ok := exe.symbols().SymbolAddr("MAIN__")
		s.hasMAIN = &ok
	}
	return *s.hasMAIN
}
