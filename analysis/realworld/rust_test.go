package realworld_test

import (
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestRustPanics: a Rust program built with panic=abort panics the common
// ways. Each is kind panic, blamed on the program's frame (never
// panic_abort's or core::result's), with the panic's message and location
// read from its core::fmt::Arguments and core::panic::Location in stack
// memory; a fault inside core::ptr::read_volatile, inlined into the
// program, blames the program's function. The culprit frame is gdb's frame
// at the same depth.
func TestRustPanics(t *testing.T) {
	bin := cachedBuild(t, "panics", []string{"panics.rs"}, debianRustc, "-g", "-C", "panic=abort", "-C", "opt-level=1", "-o", "$OUT", "panics.rs")
	for _, tc := range []struct {
		mode, kind, culprit string
		summary             []string
	}{
		{"unwrap", model.KindPanic, "panics::parse_port", []string{"Rust panic in panics::parse_port (panics.rs:21): called `Result::unwrap()` on an `Err` value: ", "(panicked at panics.rs:21:22)"}},
		{"index", model.KindPanic, "panics::Histogram::add", []string{"index out of bounds: the len is 4 but the index is 7", "panics.rs:15:9"}},
		{"expect", model.KindPanic, "panics::lookup_user", []string{"Rust panic in panics::lookup_user (panics.rs:27): no such user"}},
		{"panic", model.KindPanic, "panics::check_budget", []string{"budget exceeded: spent 120 of 100 (panicked at panics.rs:33:9)"}},
		{"volatile", model.KindNullDeref, "panics::read_register", []string{"NULL pointer dereference in panics::read_register (panics.rs:39)"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			core, _ := crashlab.Crash(t, t.TempDir(), "export RUST_BACKTRACE=0", bin, tc.mode)
			c, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			checkKindCase(t, c, kindCase{kind: tc.kind, culprit: tc.culprit, summary: tc.summary})
			if tc.kind == model.KindPanic && (c.Classification.Message == "" || !strings.Contains(c.Classification.Summary, c.Classification.Message)) {
				t.Errorf("message %q", c.Classification.Message)
			}
			gdb := crashlab.GDB(t, bin, core)
			i := c.Classification.CulpritFrame
			want, got := crashlab.GDBLines(gdb.Threads[0]), crashlab.ModelLines(c.Threads[0])
			if i < 0 || i >= len(want) || i >= len(got) || want[i] != got[i] {
				t.Errorf("culprit frame #%d: gdb %q, faultline %q", i, at(want, i), at(got, i))
			}
		})
	}
}

func at(lines []string, i int) string {
	if i < 0 || i >= len(lines) {
		return ""
	}
	return lines[i]
}
