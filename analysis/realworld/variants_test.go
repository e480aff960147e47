package realworld_test

import (
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestBuildVariants: the same program built as users build it — gcc and
// clang, -flto -O3, -fomit-frame-pointer -fno-asynchronous-unwind-tables,
// -static —
// crashed by a NULL dereference and by a thread overflowing its 256 KiB
// stack: every thread's frames equal gdb's, and the kind and culprit do
// not depend on the build.
func TestBuildVariants(t *testing.T) {
	for _, tc := range []struct {
		name, compiler string
		flags          []string
		modes          []string
	}{
		{"gcc-lto-O3", "gcc", []string{"-flto", "-O3"}, []string{"null", "overflow"}},
		{"clang-lto-O3", "clang", []string{"-flto", "-O3"}, []string{"null"}},
		{"gcc-no-fp-no-async-unwind", "gcc", []string{"-O2", "-fomit-frame-pointer", "-fno-asynchronous-unwind-tables"}, []string{"null", "overflow"}},
		{"clang-no-fp-no-async-unwind", "clang", []string{"-O2", "-fomit-frame-pointer", "-fno-asynchronous-unwind-tables"}, []string{"null", "overflow"}},
		{"gcc-static-O2", "gcc", []string{"-static", "-O2"}, []string{"null", "overflow"}},
		{"clang-static-O2", "clang", []string{"-static", "-O2"}, []string{"null", "overflow"}},
	} {
		for _, mode := range tc.modes {
			t.Run(tc.name+"-"+mode, func(t *testing.T) {
				bin := buildOnce(t, "variants-"+tc.name, tc.compiler, []string{"variants.c"}, append(tc.flags, "-g", "-pthread")...)
				core, _ := crashlab.Crash(t, t.TempDir(), "", bin, mode)
				c, err := analysis.Open(core, analysis.Options{Exe: bin})
				if err != nil {
					t.Fatal(err)
				}
				if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
					t.Errorf("frames differ from gdb:\n%s", d)
				}
				kind, fn := model.KindNullDeref, "sum_list"
				if mode == "overflow" {
					kind, fn = model.KindStackOverflow, "descend"
				}
				cls := c.Classification
				if cls.Kind != kind || culprit(c) != fn || !strings.HasPrefix(cls.Signature, fn) {
					t.Errorf("kind %s, culprit %q, signature %q; want %s in %s", cls.Kind, culprit(c), cls.Signature, kind, fn)
				}
			})
		}
	}
}
