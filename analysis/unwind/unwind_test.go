package unwind

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// compareWithGDB unwinds every thread of core and checks that the physical
// frames' pcs and signal trampolines are gdb's, and that the unwind ended
// normally where gdb's did. It returns the frames by LWP.
func compareWithGDB(t *testing.T, exe, core string) map[int][]Frame {
	t.Helper()
	c := openTestCore(t, core)
	want := gdbBacktrace(t, exe, core)
	u := NewUnwinder(c, c, Options{})
	got := map[int][]Frame{}
	for _, th := range c.threads {
		frames, stop := u.Unwind(th.regs)
		got[th.lwp] = frames
		g, ok := want[th.lwp]
		if !ok {
			t.Errorf("LWP %d: gdb has no such thread", th.lwp)
			continue
		}
		if diff := diffFrames(frames, g); diff != "" {
			t.Errorf("LWP %d: frames differ from gdb (stop %q, gdb %q):\n%s", th.lwp, stop, g.err, diff)
			continue
		}
		checkRegs(t, th.lwp, frames, g)
		if (stop == "") != (g.err == "") {
			t.Errorf("LWP %d: stop %q, gdb stopped with %q", th.lwp, stop, g.err)
		}
	}
	if len(c.threads) != len(want) {
		t.Errorf("core has %d threads, gdb %d", len(c.threads), len(want))
	}
	return got
}

// checkRegs compares the callee-saved registers and rsp the unwinder
// recovered in frames found from CFI, the context or a signal frame with
// gdb's values for the same frames.
func checkRegs(t *testing.T, lwp int, frames []Frame, g *gdbThread) {
	t.Helper()
	bad, compared := 0, 0
	defer func() {
		if compared == 0 {
			t.Errorf("LWP %d: no register compared with gdb", lwp)
		}
	}()
	for i, f := range frames {
		if i >= len(g.regs) || f.SignalTrampoline || (f.Trust != TrustContext && f.Trust != TrustCFI && f.Trust != TrustSignal) {
			continue
		}
		named := f.Regs.Named()
		for name, want := range g.regs[i] {
			got, ok := named[name]
			if ok {
				compared++
			}
			if ok && got != want && bad < 10 {
				bad++
				t.Errorf("LWP %d frame #%d (%#x, %s): %s = %#x, gdb %#x", lwp, i, f.PC, f.Trust, name, got, want)
			}
		}
	}
}

func diffFrames(got []Frame, want *gdbThread) string {
	var b strings.Builder
	bad := len(got) != len(want.pcs)
	for i := range max(len(got), len(want.pcs)) {
		g, w := "-", "-"
		if i < len(got) {
			g = fmt.Sprintf("%#x %s sig=%v", got[i].PC, got[i].Trust, got[i].SignalTrampoline)
		}
		if i < len(want.pcs) {
			w = fmt.Sprintf("%#x sig=%v", want.pcs[i], want.sigtramp[i])
			if i < len(got) && (got[i].PC != want.pcs[i] || got[i].SignalTrampoline != want.sigtramp[i]) {
				bad = true
			}
		}
		if i < 20 || i >= max(len(got), len(want.pcs))-5 {
			fmt.Fprintf(&b, "#%-3d got %-45s gdb %s\n", i, g, w)
		}
	}
	if !bad {
		return ""
	}
	return b.String()
}

var buildVariants = []struct {
	name  string
	flags []string
}{
	{"O0", []string{"-O0"}},
	{"O2", []string{"-O2"}},
	{"O2-omit-fp", []string{"-O2", "-fomit-frame-pointer"}},
	// CFI for the program's own functions only in .debug_frame.
	{"O0-debug-frame", []string{"-O0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"}},
	// No CFI for the program's own functions: the frame-pointer fallback.
	{"O0-no-cfi", []string{"-O0", "-g0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"}},
}

// TestAgainstGDB compares the unwinder with gdb on real cores of every crash
// mode built every way.
func TestAgainstGDB(t *testing.T) {
	needTools(t)
	modes := []string{"segv", "nullcall", "abort", "handler", "thread", "recurse"}
	for _, v := range buildVariants {
		t.Run(v.name, func(t *testing.T) {
			exe := buildCrash(t, t.TempDir(), v.flags...)
			for _, mode := range modes {
				t.Run(mode, func(t *testing.T) {
					core := makeCore(t, exe, mode)
					got := compareWithGDB(t, exe, core)
					checkTrust(t, v.name, mode, got)
				})
			}
		})
	}
}

// checkTrust checks the recovery methods the program's shape implies.
func checkTrust(t *testing.T, variant, mode string, threads map[int][]Frame) {
	t.Helper()
	count := map[string]int{}
	signals := 0
	for _, frames := range threads {
		if len(frames) == 0 || frames[0].Trust != TrustContext || frames[0].ReturnAddress {
			t.Errorf("frame 0 must be the context frame: %+v", frames[0])
		}
		for i, f := range frames[1:] {
			count[f.Trust]++
			if f.Trust == TrustSignal {
				signals++
				if !frames[i].SignalTrampoline {
					t.Errorf("signal frame #%d does not follow a trampoline", i+1)
				}
				if f.ReturnAddress {
					t.Errorf("interrupted frame #%d marked as a return address", i+1)
				}
			}
		}
	}
	switch mode {
	case "abort", "handler":
		if signals != 1 {
			t.Errorf("%d signal frames, want 1", signals)
		}
	case "nullcall":
		if count[TrustScan] != 1 {
			t.Errorf("call through NULL: %d scanned frames, want 1 (%v)", count[TrustScan], count)
		}
	case "recurse":
		if n := len(threads[firstLWP(threads)]); n < 30000 {
			t.Errorf("recursion: %d frames, want > 30000", n)
		}
	}
	if variant == "O0-no-cfi" && mode == "segv" && count[TrustFramePointer] == 0 {
		t.Errorf("no frame-pointer frames without CFI: %v", count)
	}
	if variant != "O0-no-cfi" && count[TrustFramePointer]+count[TrustScan] > 1 {
		t.Errorf("fallbacks used with CFI present: %v", count)
	}
}

func firstLWP(m map[int][]Frame) int {
	for k := range m {
		return k
	}
	return 0
}

// TestDeepRecursionIsFast unwinds a 30,000-frame recursion and checks the
// per-pc caches keep it to milliseconds.
func TestDeepRecursionIsFast(t *testing.T) {
	needTools(t)
	exe := buildCrash(t, t.TempDir(), "-O2")
	c := openTestCore(t, makeCore(t, exe, "recurse"))
	// The bound is on this thread's CPU time, not wall time: the test
	// command runs other stages beside go test, and a loaded machine must
	// not fail a check of the algorithm's cost.
	runtime.LockOSThread()
	cpu0 := threadCPU(t)
	start := time.Now()
	frames, stop := NewUnwinder(c, c, Options{}).Unwind(c.threads[0].regs)
	wall, cpu := time.Since(start), threadCPU(t)-cpu0
	runtime.UnlockOSThread()
	t.Logf("%d frames in %v CPU (%v wall), stop %q", len(frames), cpu, wall, stop)
	if len(frames) < 30000 || stop != "" {
		t.Fatalf("%d frames, stop %q", len(frames), stop)
	}
	if cpu > 500*time.Millisecond {
		t.Errorf("unwinding took %v of CPU", cpu)
	}
	limited, stop := Unwind(c, c, c.threads[0].regs, Options{MaxFrames: 100})
	if len(limited) != 100 || stop != "depth limit 100 reached" {
		t.Errorf("MaxFrames 100: %d frames, stop %q", len(limited), stop)
	}
}

// threadCPU is the CPU time the calling OS thread has used (RUSAGE_THREAD).
func threadCPU(t *testing.T) time.Duration {
	t.Helper()
	const rusageThread = 1 // RUSAGE_THREAD, Linux
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
