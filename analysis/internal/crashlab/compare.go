package crashlab

import (
	"fmt"
	"strings"

	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/analysis/model"
)

// FrameLine is how a frame compares with gdb: "fn at file:line", "fn", or
// "??" for an unknown function.
func FrameLine(function, file string, line int) string {
	if function == "" {
		function = "??"
	}
	if file == "" {
		return function
	}
	return fmt.Sprintf("%s at %s:%d", function, file, line)
}

// GDBLines lists a gdb thread's frames as FrameLine strings.
func GDBLines(th logs.GDBThread) []string {
	out := make([]string, 0, len(th.Frames))
	for _, f := range th.Frames {
		out = append(out, frameLine(f.Signal, f.Function, f.File, f.Line))
	}
	return out
}

// ModelLines lists a thread's frames as FrameLine strings.
func ModelLines(th model.Thread) []string {
	out := make([]string, 0, len(th.Frames))
	for _, f := range th.Frames {
		out = append(out, frameLine(f.Signal, f.Function, f.File, f.Line))
	}
	return out
}

func frameLine(signal bool, function, file string, line int) string {
	if signal {
		return model.SignalFrameName
	}
	return FrameLine(function, file, line)
}

// Diff compares two frame lists; it returns "" when they are equal, else
// the first differing frames.
func Diff(want, got []string) string {
	n := max(len(want), len(got))
	bad := 0
	var b strings.Builder
	for i := 0; i < n; i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			bad++
			if bad <= 8 {
				fmt.Fprintf(&b, "  #%d want: %q\n     got:  %q\n", i, w, g)
			}
		}
	}
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d frames differ (want %d frames, got %d):\n%s", bad, n, len(want), len(got), b.String())
}

// CompareWithGDB compares every thread of the crash with gdb's, by LWP;
// it returns one line per difference ("" when they agree).
func CompareWithGDB(want *logs.GDBLog, got *model.Crash) string {
	var b strings.Builder
	if len(want.Threads) != len(got.Threads) {
		fmt.Fprintf(&b, "%d threads, gdb shows %d\n", len(got.Threads), len(want.Threads))
	}
	byLWP := map[int]model.Thread{}
	for _, th := range got.Threads {
		byLWP[th.ID] = th
	}
	for _, wt := range want.Threads {
		th, ok := byLWP[wt.LWP]
		if !ok {
			fmt.Fprintf(&b, "gdb thread LWP %d missing\n", wt.LWP)
			continue
		}
		if d := Diff(GDBLines(wt), ModelLines(th)); d != "" {
			fmt.Fprintf(&b, "LWP %d: %s", wt.LWP, d)
		}
	}
	return b.String()
}
