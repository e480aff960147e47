package realworld_test

import (
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/analysis/model"
)

// debianRustc is Debian's rustc (.ci/install.d/rust-i386.sh), not
// whatever rustup put first in PATH.
const debianRustc = "/usr/bin/rustc"

// TestRustNamesKeepUnderscores: a Rust panic (panic=abort) crashed here.
// The standard library's __rust_start_panic and __rust_end_short_backtrace
// keep both leading underscores — the pinned demangler printed
// _rust_end_short_backtrace, reading the legacy name's "_" as v0's length
// separator (analysis/rustdemangle implements Rust's own rules). Built
// with DWARF, the names come from the DIE tree as gdb's do (generic
// arguments included; TestRustFramesAsGDBNamesThem); built without, from
// the symbol table, and then every frame gdb names is named as gdb names
// it (gdb prints minimal symbols demangled verbose: the legacy hash, the
// v0 crate disambiguators), in both manglings, for the panic and for a
// NULL write in the program's own generic code under a closure.
func TestRustNamesKeepUnderscores(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"dwarf", []string{"-g"}},
		{"symtab-legacy", []string{"-C", "strip=debuginfo", "-C", "force-unwind-tables=yes"}},
		{"symtab-v0", []string{"-C", "strip=debuginfo", "-C", "force-unwind-tables=yes", "-C", "symbol-mangling-version=v0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			command := append([]string{debianRustc, "-C", "panic=abort", "-o", "$OUT"}, tc.flags...)
			bin := cachedBuild(t, "rust_names-"+tc.name, []string{"rust_names.rs"}, append(command, "rust_names.rs")...)
			c, core := crashRust(t, bin)
			th := crashingThread(t, c)
			names := map[string]bool{}
			for _, f := range th.Frames {
				names[f.Function] = true
				if strings.Contains(f.Function, "::_rust_") {
					t.Errorf("frame %d: %s lost an underscore", f.Index, f.Function)
				}
			}
			if tc.name == "dwarf" {
				for _, want := range []string{"panic_abort::__rust_start_panic", "std::sys_common::backtrace::__rust_end_short_backtrace<std::panicking::begin_panic_handler::{closure_env#0}, !>", "rust_names::parse_port"} {
					if !names[want] {
						t.Errorf("no frame %s", want)
					}
				}
				return
			}
			compareNamedFrames(t, crashlab.GDB(t, bin, core).Threads[0].Frames, th.Frames, 5)
			c, core = crashRust(t, bin, "segv")
			compareNamedFrames(t, crashlab.GDB(t, bin, core).Threads[0].Frames, crashingThread(t, c).Frames, 8)
		})
	}
}

// crashRust runs the program with args into a core and opens it.
func crashRust(t *testing.T, bin string, args ...string) (*analysis.Crash, string) {
	t.Helper()
	core, _ := crashlab.Crash(t, t.TempDir(), "", append([]string{bin}, args...)...)
	c, err := analysis.Open(core, analysis.Options{Exe: bin})
	if err != nil {
		t.Fatal(err)
	}
	return c, core
}

// compareNamedFrames checks faultline's frames against gdb's, frame by
// frame, up to the first one gdb cannot name (without DWARF gdb's unwind
// stops early past a noreturn call, at a pc of 0); at least min.
func compareNamedFrames(t *testing.T, gdb []logs.GDBFrame, got []model.Frame, min int) {
	t.Helper()
	n := 0
	for i, g := range gdb {
		if g.Function == "??" {
			break
		}
		if i >= len(got) || got[i].Function != g.Function {
			var have string
			if i < len(got) {
				have = got[i].Function
			}
			t.Errorf("frame %d: gdb %q, faultline %q", i, g.Function, have)
		}
		n++
	}
	if n < min {
		t.Errorf("gdb named only %d frames", n)
	}
}

func crashingThread(t *testing.T, c *analysis.Crash) model.Thread {
	t.Helper()
	for _, th := range c.Threads {
		if th.Crashed {
			return th
		}
	}
	t.Fatal("no crashing thread")
	return model.Thread{}
}
