package analysis_test

import (
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/internal/crashbuild"
)

// krSource crashes in a K&R definition (as zlib's inflate was written
// until 1.3) called through a static function gcc inlines at -O2.
const krSource = `#include <stddef.h>

int ZEXPORT_like;

int kr_sum(p, n)
int *p;
int n;
{
  int s = 0;
  while (n--)
    s += *p++;
  return s;
}

static inline int twice(int *p, int n) {
  int a = kr_sum(p, n);
  return a + kr_sum(p + 1, n);
}

int main(void) {
  int *none = NULL;
  return twice(none, 3);
}
`

// TestFunctionExtentFromDWARF: a frame's function spans, as the binary
// says, from its DW_AT_decl_line (the line naming it, even in a K&R
// definition whose parameter declarations follow) to the last line its
// code covers: the closing brace at -O0, and for an instance inlined at
// -O2 the last line of its body that code came from — per inline level.
func TestFunctionExtentFromDWARF(t *testing.T) {
	src := strings.Split(krSource, "\n")
	lineOf := func(prefix string) int {
		for i, l := range src {
			if strings.HasPrefix(l, prefix) {
				return i + 1
			}
		}
		t.Fatalf("no line starting %q", prefix)
		return 0
	}
	krStart, krEnd := lineOf("int kr_sum(p, n)"), lineOf("  return s;")+1
	twiceStart, twiceLast := lineOf("static inline int twice"), lineOf("  return a + kr_sum")
	for _, tc := range []struct {
		opt     string
		inlined bool
	}{{"-O0", false}, {"-O2", true}} {
		t.Run(tc.opt, func(t *testing.T) {
			p := crashbuild.Crash(t, t.TempDir(), "src/kr.c", krSource, "gcc", "-g", tc.opt, "-fno-omit-frame-pointer")
			c, err := analysis.Open(p.Core, analysis.Options{Exe: p.Exe, Offline: true})
			if err != nil {
				t.Fatal(err)
			}
			th := c.CrashingThread()
			seen := map[string]analysis.Extent{}
			for _, f := range th.Frames {
				if e, ok := analysis.FunctionExtent(c, th.ID, f.Index); ok && f.Function != "" {
					seen[f.Function] = e
					if !strings.HasSuffix(e.File, "src/kr.c") || f.Line < e.DeclLine || f.Line > e.LastLine {
						t.Errorf("#%d %s at line %d: extent %+v does not hold it", f.Index, f.Function, f.Line, e)
					}
				}
			}
			kr, ok := seen["kr_sum"]
			if !ok || kr.DeclLine != krStart {
				t.Fatalf("kr_sum: %+v (%v); want it declared at line %d; frames %+v", kr, ok, krStart, th.Frames)
			}
			if !tc.inlined && kr.LastLine != krEnd {
				t.Errorf("kr_sum at -O0 ends at %d, want the closing brace at %d", kr.LastLine, krEnd)
			}
			if tw, ok := seen["twice"]; !ok || tw.DeclLine != twiceStart || tw.LastLine < twiceLast-1 || tw.LastLine > twiceLast+1 {
				t.Errorf("twice: %+v (%v); want lines %d to about %d", tw, ok, twiceStart, twiceLast)
			}
		})
	}
}
