package realworld_test

import (
	"fmt"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
)

// TestUcontextStackEndsAtStartContext: a coroutine on a makecontext(3)
// stack writes through NULL (ucontext.c), its stack on the heap, in a
// static array and in an array in main's frame, built with gcc -O0 and
// -O2. The stack ends at glibc's __start_context, the return address
// makecontext pushed for the coroutine: store, step, coroutine and the
// "??" frame in libc (gdb's lookup at pc-1 falls before __start_context)
// equal gdb's, and nothing follows. Before, the frame-pointer chain or the
// stack scan went on from there: a stale coroutine frame from an earlier
// step in the static stack, or __libc_start_call_main, __libc_start_main
// and _start above the local one. gdb is wrong past that frame too: its
// prologue analyzer reads the uc_link pointer makecontext stored above the
// return address as a caller's pc (a "??" in the program's .bss), then the
// 0 above it; the test checks gdb still does so, so that this exception is
// revisited when gdb changes.
func TestUcontextStackEndsAtStartContext(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		bin := cachedBuild(t, "ucontext"+opt, []string{"ucontext.c"}, "gcc", "-g", opt, "-o", "$OUT", "ucontext.c")
		for _, where := range []string{"heap", "static", "local"} {
			t.Run(fmt.Sprintf("%s/%s", opt, where), func(t *testing.T) {
				t.Parallel()
				core, _ := crashlab.Crash(t, t.TempDir(), "", bin, where)
				c, err := analysis.Open(core, analysis.Options{Exe: bin})
				if err != nil {
					t.Fatal(err)
				}
				th := crashingThread(t, c)
				gdb := crashlab.GDB(t, bin, core).Threads[0]
				want, got := crashlab.GDBLines(gdb), crashlab.ModelLines(th)
				if len(want) != 6 {
					t.Fatalf("gdb printed %d frames, not 4 and its two past __start_context:\n%q", len(want), want)
				}
				if d := crashlab.Diff(want[:4], got); d != "" {
					t.Errorf("frames differ from gdb's up to __start_context: %s", d)
				}
				if f := th.Frames[len(th.Frames)-1]; f.Function != "" || f.Module == "" {
					t.Errorf("last frame %q in %q; want the ?? frame in libc at __start_context", f.Function, f.Module)
				}
				if g := gdb.Frames[4]; g.Function != "??" || g.Library != "" || gdb.Frames[5].PC != 0 {
					t.Errorf("gdb's frames past __start_context are no longer uc_link and 0: %+v %+v", g, gdb.Frames[5])
				}
			})
		}
	}
}
