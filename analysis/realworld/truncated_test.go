package realworld_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestTruncatedCore: with `ulimit -c 2048` the kernel cuts the core of a
// process with a 64 MiB heap short, and the main thread's stack (mapped
// last) is absent. One headline problem says so — how much of the core is
// there, from where memory is missing, whose stack — at the file's end
// offset, instead of one problem per segment at program-header offsets;
// the crash is still read from what is there (registers, signal, code).
func TestTruncatedCore(t *testing.T) {
	bin := buildOnce(t, "bigheap", "gcc", []string{"bigheap.c"}, "-O1", "-g", "-pthread")
	core, _ := crashlab.Crash(t, t.TempDir(), "ulimit -c 2048", bin)
	c, err := analysis.Open(core, analysis.Options{Exe: bin})
	if err != nil {
		t.Fatal(err)
	}
	var trunc []model.Problem
	for _, p := range c.Problems {
		if strings.Contains(p.Message, "truncated") || strings.Contains(p.Message, "end of the file") {
			trunc = append(trunc, p)
		}
	}
	if len(trunc) != 1 {
		t.Fatalf("%d problems about the truncation, want 1: %q", len(trunc), trunc)
	}
	msg := trunc[0].Message
	for _, want := range []string{"the core is truncated: ", "MiB of ", fmt.Sprintf("the stacks of thread %d are absent", c.Dump.PID)} {
		if !strings.Contains(msg, want) {
			t.Errorf("problem %q lacks %q", msg, want)
		}
	}
	if c.Signal == nil || c.Signal.Name != "SIGSEGV" || c.Classification.Kind != model.KindNullDeref || culprit(c) != "store" {
		t.Errorf("signal %+v, kind %s, culprit %q; want SIGSEGV, null-deref in store (all in the notes and the executable)",
			c.Signal, c.Classification.Kind, culprit(c))
	}
}
