package realworld_test

import (
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
)

// TestNostdlibOutermostFrame: in a -nostdlib program _start's CFI does not
// mark the return address undefined; the stack still ends at _start (the
// entry point), as in gdb, instead of listing argc as a frame at pc 0x1,
// which became the culprit when the fault was in _start itself.
func TestNostdlibOutermostFrame(t *testing.T) {
	for _, tc := range []struct {
		name, define, culprit string
		frames                int
	}{
		{"in-callee", "-DIN_CALLEE", "poke", 2},
		{"in-start", "-DIN_START", "_start", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := buildOnce(t, "nostdlib"+tc.define, "gcc", []string{"nostdlib.c"}, "-nostdlib", "-static", "-O1", "-g", tc.define)
			core, _ := crashlab.Crash(t, t.TempDir(), "", bin)
			c, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
				t.Errorf("frames differ from gdb:\n%s", d)
			}
			if n := len(c.Threads[0].Frames); n != tc.frames {
				t.Errorf("%d frames, want %d: %q", n, tc.frames, crashlab.ModelLines(c.Threads[0]))
			}
			if got := culprit(c); got != tc.culprit {
				t.Errorf("culprit %q, want %q", got, tc.culprit)
			}
			if c.Threads[0].Truncated != "" {
				t.Errorf("the stack ends with a problem: %s", c.Threads[0].Truncated)
			}
		})
	}
}
