package unwind

import (
	"math/rand"
	"strings"
	"testing"
)

// patchedMemory overlays a function of the address on a range of memory.
type patchedMemory struct {
	Memory
	lo, hi uint64
	word   func(addr uint64) byte
}

func (m *patchedMemory) ReadMemory(addr uint64, p []byte) (int, error) {
	n, err := m.Memory.ReadMemory(addr, p)
	for i := range p[:n] {
		if a := addr + uint64(i); a >= m.lo && a < m.hi {
			p[i] = m.word(a)
		}
	}
	return n, err
}

// nilFinder knows no module.
type nilFinder struct{}

func (nilFinder) ModuleAt(uint64) *Module { return nil }

// TestCorruptStacks unwinds a real core whose stack has been overwritten:
// every unwind must end with a reason, within bounds, without a panic.
func TestCorruptStacks(t *testing.T) {
	needTools(t)
	exe := buildCrash(t, t.TempDir(), "-O2")
	c := openTestCore(t, makeCore(t, exe, "segv"))
	regs := c.threads[0].regs
	good, stop := Unwind(c, c, regs, Options{})
	if stop != "" || len(good) < 5 {
		t.Fatalf("clean unwind: %d frames, stop %q", len(good), stop)
	}
	sp := regs.SP()
	ra := good[2].PC // a real return address (into outer)
	rng := rand.New(rand.NewSource(1))
	random := make([]byte, 1<<16)
	rng.Read(random)
	cases := []struct {
		name string
		word func(addr uint64) byte
	}{
		{"zeros", func(uint64) byte { return 0 }},
		{"ones", func(uint64) byte { return 0xff }},
		{"random", func(a uint64) byte { return random[a%uint64(len(random))] }},
		// Every slot holds the same real return address: each CFI step pops
		// a frame until the stack mapping ends.
		{"same-return-address", func(a uint64) byte { return byte(ra >> (8 * (a % 8))) }},
		// Every slot points just above itself: a frame-pointer chain that
		// never ends.
		{"self-chain", func(a uint64) byte { return byte((a&^7 + 16) >> (8 * (a % 8))) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := &patchedMemory{Memory: c, lo: sp + 8, hi: sp + 1<<20, word: tc.word}
			frames, stop := Unwind(mem, c, regs, Options{MaxFrames: 5000})
			if len(frames) == 0 || len(frames) > 5000 {
				t.Fatalf("%d frames", len(frames))
			}
			if frames[0].PC != good[0].PC {
				t.Errorf("frame 0 changed: %#x", frames[0].PC)
			}
			t.Logf("%d frames, stop %q", len(frames), stop)
		})
	}
	t.Run("no-modules", func(t *testing.T) {
		frames, stop := Unwind(c, nilFinder{}, regs, Options{})
		if len(frames) != 1 || !strings.HasPrefix(stop, "no unwind info for 0x") {
			t.Errorf("%d frames, stop %q", len(frames), stop)
		}
	})
	t.Run("no-memory", func(t *testing.T) {
		frames, stop := Unwind(nil, c, regs, Options{})
		if len(frames) != 1 || !strings.HasPrefix(stop, "cannot read memory at 0x") {
			t.Errorf("%d frames, stop %q", len(frames), stop)
		}
	})
}

// TestRegsNamed checks the psABI numbering round trip.
func TestRegsNamed(t *testing.T) {
	r := NewX86_64Regs(0x401000, 0x7ffe0000, 0x7ffe0010, map[string]uint64{"rbx": 3, "r15": 15, "bogus": 1})
	for n, want := range map[int]uint64{16: 0x401000, 7: 0x7ffe0000, 6: 0x7ffe0010, 3: 3, 15: 15} {
		if v, ok := r.Get(n); !ok || v != want {
			t.Errorf("reg %d = %#x, %v", n, v, ok)
		}
	}
	if _, ok := r.Get(0); ok {
		t.Error("rax set")
	}
	named := r.Named()
	if len(named) != 5 || named["rip"] != 0x401000 || named["rsp"] != 0x7ffe0000 || named["r15"] != 15 {
		t.Errorf("Named() = %v", named)
	}
}
