package unwind

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

func TestMain(m *testing.M) { os.Exit(boundtest.Main(m)) }

// Crafted cores for the unwinder's bounds (issue 18 item 2). Every thread's
// pc is glibc's __restore_rt byte sequence, so each frame is a signal
// trampoline whose ucontext (at sp+40) says where the interrupted frame is.

const (
	trampAddr = 0x400000
	stackBase = 0x7ff000000000
)

func trampolineLoad() boundtest.CoreLoad {
	code := make([]byte, 4096)
	copy(code, amd64SigreturnCode)
	return boundtest.CoreLoad{Vaddr: trampAddr, Flags: elf.PF_R | elf.PF_X, Data: code}
}

func sigThreads(n int, sp uint64) []boundtest.CoreThread {
	ts := make([]boundtest.CoreThread, n)
	for i := range ts {
		ts[i].LWP = int32(1000 + i)
		ts[i].Regs[boundtest.RegRIP] = trampAddr
		ts[i].Regs[boundtest.RegRSP] = sp
	}
	return ts
}

// identicalSignalCore: 50 threads at a trampoline whose ucontext restores
// the same pc and sp (gdb: one frame, "previous frame identical").
func identicalSignalCore() []byte {
	stack := make([]byte, 4096)
	binary.LittleEndian.PutUint64(stack[40+8*15:], stackBase) // REG_RSP
	binary.LittleEndian.PutUint64(stack[40+8*16:], trampAddr) // REG_RIP
	return boundtest.X86Core(sigThreads(50, stackBase), []boundtest.CoreLoad{trampolineLoad(), {Vaddr: stackBase, Flags: elf.PF_R | elf.PF_W, Data: stack}})
}

// chainedSignalCore: 50 threads on one stack where every 16 bytes hold a
// ucontext restoring the trampoline 16 bytes higher: each thread has
// 100,000 distinct signal frames (the per-thread cap), 5 M in all.
func chainedSignalCore() []byte {
	const frames = 100000
	stack := make([]byte, 16*frames+4096)
	for m := 0; m+16 <= len(stack); m += 16 {
		binary.LittleEndian.PutUint64(stack[m:], stackBase+uint64(m)-16*9)
		binary.LittleEndian.PutUint64(stack[m+8:], trampAddr)
	}
	return boundtest.X86Core(sigThreads(50, stackBase), []boundtest.CoreLoad{trampolineLoad(), {Vaddr: stackBase, Flags: elf.PF_R | elf.PF_W, Data: stack}})
}

func analyzeCore(t *testing.T, core []byte, lim boundtest.Limits) boundtest.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "core")
	if err := os.WriteFile(path, core, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("crafted core: %d bytes", len(core))
	return boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", "--offline", path}, Limits: lim})
}

func TestBoundIdenticalSignalFrames(t *testing.T) {
	r := analyzeCore(t, identicalSignalCore(), boundtest.Limits{Wall: 60 * time.Second, RSSKiB: 1 << 20})
	if r.Killed != "" || r.Exit != 0 {
		t.Fatalf("%v\n%s", r, r.Stderr)
	}
	c := boundtest.Crash(t, r)
	if len(c.Threads) != 50 {
		t.Fatalf("%d threads, want 50", len(c.Threads))
	}
	for _, th := range c.Threads {
		if len(th.Frames) > 2 || !strings.Contains(th.Truncated, "previous frame identical") {
			t.Fatalf("thread %d: %d frames, truncated %q; want at most 2 frames ending with \"previous frame identical\"", th.ID, len(th.Frames), th.Truncated)
		}
	}
	if r.CPUTime > 5*time.Second || r.MaxRSSKiB > 100<<10 {
		t.Errorf("bound: cpu <= 5 s, maxrss <= 100 MiB; got %v", r)
	}
}

func TestBoundFrameBudget(t *testing.T) {
	r := analyzeCore(t, chainedSignalCore(), boundtest.Limits{Wall: 60 * time.Second, RSSKiB: 1536 << 10})
	if r.Killed != "" || r.Exit != 0 {
		t.Fatalf("%v\n%s", r, r.Stderr)
	}
	c := boundtest.Crash(t, r)
	total := 0
	for _, th := range c.Threads {
		total += len(th.Frames)
	}
	if total > 2*DefaultMaxTotalFrames || !boundtest.HasProblem(c, "frame budget") {
		t.Errorf("%d frames in %d threads; want at most %d model entries and a frame-budget problem", total, len(c.Threads), 2*DefaultMaxTotalFrames)
	}
	if r.CPUTime > 10*time.Second || r.MaxRSSKiB > 400<<10 {
		t.Errorf("bound: cpu <= 10 s, maxrss <= 400 MiB; got %v", r)
	}
}

func TestTimeBudget(t *testing.T) {
	u := NewUnwinder(nil, nilFinder{}, Options{MaxTime: time.Millisecond})
	start := NewX86_64Regs(trampAddr, stackBase, 0, nil)
	if _, stop := u.Unwind(start); strings.Contains(stop, "budget") {
		t.Fatalf("first unwind stopped by the budget: %q", stop)
	}
	time.Sleep(5 * time.Millisecond)
	frames, stop := u.Unwind(start)
	if len(frames) != 1 || !strings.Contains(stop, "time budget of 1ms") || u.Budget() != stop {
		t.Fatalf("after the time budget: %d frames, stop %q, Budget %q", len(frames), stop, u.Budget())
	}
}
