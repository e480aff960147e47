package realworld_test

import (
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/analysis/model"
)

// Issue 23 items 7 and 8: Rust and Fortran frames named as gdb names them
// from DWARF, and the stack ending where gdb's does, at the language's
// main. Every thread's frames, function and file:line, equal gdb 13's.

// TestRustFramesAsGDBNamesThem: Rust programs built with Debian's rustc
// and -g, crashed here. gdb names a Rust frame by its DIE's DW_AT_name
// under its namespaces and types, never by the linkage name: closures are
// {closure#0} (the legacy demangling says {{closure}}), generic functions
// and types carry their arguments (core::ptr::write_volatile<u32>,
// rust_frames::Grid<u32>::fill_with<u32, rust_frames::run::{closure_env#1}>),
// impl blocks are {impl#N}, and the function exported as rust_begin_unwind
// is std::panicking::begin_panic_handler. Before, faultline printed the
// demangled linkage names.
//
// The stack ends where gdb's does. rust_frames' fn main declares nothing
// inside it, so gdb finds it by the name DWARF marks (DW_AT_main_subprogram)
// and its backtrace ends at rust_frames::main; faultline went on through 14
// frames of the standard library's start-up to C's main. rust_names' fn
// main holds a closure, for which rustc emits a namespace rust_names::main:
// gdb 13's lookup of main's name finds that namespace, so gdb recognises no
// frame as main's and goes on past C's main to _start (where faultline
// stopped, at C's main).
func TestRustFramesAsGDBNamesThem(t *testing.T) {
	frames := cachedBuild(t, "rust_frames", []string{"rust_frames.rs"}, debianRustc, "-g", "-C", "panic=abort", "-o", "$OUT", "rust_frames.rs")
	names := cachedBuild(t, "rust_names-dwarf", []string{"rust_names.rs"}, debianRustc, "-C", "panic=abort", "-o", "$OUT", "-g", "rust_names.rs")
	for _, tc := range []struct {
		name, bin, mode, last string
		has                   []string
		kind                  *kindCase
	}{
		{"segv", frames, "segv", "rust_frames::main", []string{"rust_frames::run::{closure#1}", "rust_frames::Grid<u32>::fill_with<u32, rust_frames::run::{closure_env#1}>", "core::ptr::write_volatile<u32>"},
			&kindCase{kind: model.KindNullDeref, culprit: "rust_frames::poke", summary: []string{"NULL pointer dereference in rust_frames::poke (rust_frames.rs:28)"}}},
		{"panic", frames, "panic", "rust_frames::main", []string{"std::panicking::begin_panic_handler", "std::panicking::begin_panic_handler::{closure#0}", "rust_frames::run::{closure#0}"},
			&kindCase{kind: model.KindPanic, culprit: "rust_frames::run::{closure#0}", summary: []string{"Rust panic in rust_frames::run::{closure#0} (rust_frames.rs:36): index out of bounds: the len is 3 but the index is 3"}}},
		{"closure-in-main", names, "segv", "_start", []string{"rust_names::main::{closure#0}", "std::rt::lang_start::{closure#0}<()>", "main"}, nil},
		{"closure-in-main-panic", names, "", "_start", []string{"std::sys_common::backtrace::__rust_end_short_backtrace<std::panicking::begin_panic_handler::{closure_env#0}, !>"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var args []string
			if tc.mode != "" {
				args = []string{tc.mode}
			}
			c, core := crashRust(t, tc.bin, args...)
			compareAllThreads(t, c, crashlab.GDB(t, tc.bin, core))
			th := crashingThread(t, c)
			if last := th.Frames[len(th.Frames)-1].Function; last != tc.last {
				t.Errorf("the crashing stack ends at %q, want %q", last, tc.last)
			}
			checkFrameNames(t, th, tc.has)
			if tc.kind != nil {
				checkKindCase(t, c, *tc.kind)
			}
		})
	}
}

// TestFortranFramesAsGDBNamesThem: a gfortran program (fortran_names.f90)
// writing through an unassociated pointer in an internal procedure of a
// module procedure, called from an internal procedure of the main
// program, built -O0 and -O2 (where gfortran inlines both internal
// procedures). gdb names a module procedure under its module
// (geometry::fill_row, where faultline printed the linkage name
// __geometry_MOD_fill_row), an internal procedure under its host's name
// (fill_row::put, solver::run; inlined, with no prefix) and ends the
// stack at the main program the DWARF marks (DW_AT_main_subprogram:
// solver), where faultline went on to C's main. The kind's summary and
// culprit use the same name.
func TestFortranFramesAsGDBNamesThem(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			t.Parallel()
			bin := cachedBuild(t, "fortran_names"+opt, []string{"fortran_names.f90"}, "gfortran", "-g", opt, "-o", "$OUT", "fortran_names.f90")
			core, _ := crashlab.Crash(t, t.TempDir(), "", bin)
			c, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			compareAllThreads(t, c, crashlab.GDB(t, bin, core))
			th := crashingThread(t, c)
			if last := th.Frames[len(th.Frames)-1].Function; last != "solver" {
				t.Errorf("the stack ends at %q, want the main program solver", last)
			}
			put := "put" // inlined
			want := []string{"geometry::fill_row", "solver"}
			if opt == "-O0" {
				put = "fill_row::put"
				want = append(want, "solver::run")
			}
			checkFrameNames(t, th, append(want, put))
			checkKindCase(t, c, kindCase{kind: model.KindNullDeref, culprit: put, reraised: true,
				summary: []string{"NULL pointer dereference in " + put + " (fortran_names.f90:20)"}})
			if sig := c.Classification.Signature; !strings.HasPrefix(sig, put+" | geometry::fill_row") {
				t.Errorf("signature %q", sig)
			}
		})
	}
}

// compareAllThreads holds every thread's frames to gdb's.
func compareAllThreads(t *testing.T, c *analysis.Crash, gdb *logs.GDBLog) {
	t.Helper()
	if d := crashlab.CompareWithGDB(gdb, c); d != "" {
		t.Errorf("frames differ from gdb's:\n%s", d)
	}
}

// checkFrameNames checks that the thread has a frame named each of names.
func checkFrameNames(t *testing.T, th model.Thread, names []string) {
	t.Helper()
	have := map[string]bool{}
	for _, f := range th.Frames {
		have[f.Function] = true
	}
	for _, n := range names {
		if !have[n] {
			t.Errorf("no frame named %q", n)
		}
	}
}

// TestMAINSymbolIsGDBsMain: a C program that defines MAIN__ (mainstub.c),
// with and without DWARF. Debian's gdb (its patch gdb-fortran-main) takes
// a MAIN__ symbol for the program's main when no DWARF marks one, so its
// backtrace goes on past C's main to _start, as R's does
// (TestReraisingRuntimes/R); so does faultline's, where it stopped at main.
func TestMAINSymbolIsGDBsMain(t *testing.T) {
	for _, g := range []string{"-g", "-g0"} {
		t.Run(g, func(t *testing.T) {
			t.Parallel()
			bin := cachedBuild(t, "mainstub"+g, []string{"mainstub.c"}, "gcc", g, "-O1", "-o", "$OUT", "mainstub.c")
			core, _ := crashlab.Crash(t, t.TempDir(), "", bin)
			c, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			compareAllThreads(t, c, crashlab.GDB(t, bin, core))
			th := crashingThread(t, c)
			if last := th.Frames[len(th.Frames)-1].Function; last != "_start" {
				t.Errorf("the stack ends at %q, want _start", last)
			}
		})
	}
}
