package realworld_test

import (
	"testing"

	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/analysis/model"
)

// compareThreads compares every thread's frames with gdb's, by LWP, after
// pick has cut both lists to what gdb can be held to (gdb's frames as
// crashlab.GDBLines, the thread as faultline unwound it); it returns how
// many frames were compared.
func compareThreads(t *testing.T, gdb *logs.GDBLog, c *model.Crash, pick func(want []string, th model.Thread) (w, g []string)) int {
	t.Helper()
	byLWP := map[int]model.Thread{}
	for _, th := range c.Threads {
		byLWP[th.ID] = th
	}
	if len(gdb.Threads) != len(c.Threads) {
		t.Errorf("%d threads, gdb shows %d", len(c.Threads), len(gdb.Threads))
	}
	compared := 0
	for _, wt := range gdb.Threads {
		want, got := pick(crashlab.GDBLines(wt), byLWP[wt.LWP])
		if d := crashlab.Diff(want, got); d != "" {
			t.Errorf("LWP %d: %s", wt.LWP, d)
		}
		compared += len(want)
	}
	return compared
}
