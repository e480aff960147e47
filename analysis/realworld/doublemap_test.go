package realworld_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
)

// TestLibraryMappedTwice: a program maps libc's file a second time (as
// ASan's symbolizer, gdb's Python or V8 do) and crashes under qsort; libc's
// module is the loader's mapping, not the span of both, so its frames are
// named and the stack equals gdb's (they were ?? and the unwinder fell back
// to a stack scan).
func TestLibraryMappedTwice(t *testing.T) {
	bin := buildOnce(t, "doublemap", "gcc", []string{"doublemap.c"}, "-O1", "-g")
	core, _ := crashlab.Crash(t, t.TempDir(), "", bin)
	c, err := analysis.Open(core, analysis.Options{Exe: bin})
	if err != nil {
		t.Fatal(err)
	}
	if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
		t.Errorf("frames differ from gdb:\n%s", d)
	}
	libc := 0
	for _, m := range c.Modules {
		if filepath.Base(m.Path) != "libc.so.6" {
			continue
		}
		libc++
		for _, th := range c.Threads {
			for _, f := range th.Frames {
				if f.Module == m.Path && (f.Addr < m.Lo || f.Addr >= m.Hi) {
					t.Errorf("frame %s at %s outside libc's module %s-%s", f.Function, f.PC, m.Start, m.End)
				}
			}
		}
		if m.Hi-m.Lo > 16<<20 {
			t.Errorf("libc's module spans %#x bytes: both mappings", m.Hi-m.Lo)
		}
	}
	if libc != 1 {
		t.Errorf("%d libc modules, want 1 (the loaded one)", libc)
	}
	if got := culprit(c); got != "by_value" {
		t.Errorf("culprit %q, want by_value", got)
	}
	if sig := c.Classification.Signature; strings.Contains(sig, "??") || strings.Contains(sig, "0x") {
		t.Errorf("signature %q", sig)
	}
}
