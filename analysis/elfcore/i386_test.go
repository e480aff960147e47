package elfcore

import (
	"compress/gzip"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// lldbCore is one of LLDB's published i386 cores (analysis/realworld/
// testdata/lldb, its README gives origin and license), written by a
// kernel: NT_PRSTATUS, NT_PRPSINFO, NT_SIGINFO, NT_AUXV and NT_FILE in
// their 32-bit layouts.
func lldbCore(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "realworld", "testdata", "lldb", name+".core.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(io.LimitReader(zr, 16<<20))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestI386KernelCore reads the notes of LLDB's i386 cores as LLDB's tests
// and gdb see them: TestLinuxCoreThreads.py's pid 5193 with 3 threads and
// SIGILL on 5195 (a core LLDB cut to its notes: the missing stacks are a
// problem); TestLinuxCore.py's pid 32306, the program a.out mapped,
// registers whose eip lies in it and whose esp is in the core.
func TestI386KernelCore(t *testing.T) {
	c, err := Parse(lldbCore(t, "thread_crash-linux-i386"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Machine != elf.EM_386 || c.Class != elf.ELFCLASS32 {
		t.Fatalf("machine %v class %v", c.Machine, c.Class)
	}
	if c.Process == nil || c.Process.PID != 5193 || len(c.Threads) != 3 {
		t.Fatalf("process %+v, %d threads; LLDB expects pid 5193 and 3 threads", c.Process, len(c.Threads))
	}
	if c.Signal == nil || c.Signal.Signo != 4 || c.Threads[0].LWP != 5195 || c.Threads[0].Signal != 4 {
		t.Errorf("signal %+v, first thread %d with signal %d; LLDB expects SIGILL on 5195", c.Signal, c.Threads[0].LWP, c.Threads[0].Signal)
	}
	if !c.Signal.FromUser() || c.Signal.Pid != 5193 {
		t.Errorf("siginfo %+v: raise() sends SIGILL from the process itself (si_pid at the union's 32-bit offset)", c.Signal)
	}

	c, err = Parse(lldbCore(t, "linux-i386"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Process == nil || c.Process.PID != 32306 || c.Process.Fname != "a.out" || len(c.Threads) != 1 {
		t.Fatalf("process %+v, %d threads; LLDB expects pid 32306, a.out", c.Process, len(c.Threads))
	}
	r, ok := c.Threads[0].I386()
	if !ok || r.Eip == 0 || r.Esp == 0 || c.Threads[0].PC() != r.Eip || c.Threads[0].SP() != r.Esp {
		t.Fatalf("registers %+v", r)
	}
	f := c.FileAt(r.Eip)
	if f == nil || filepath.Base(f.Path) != "a.out" || len(c.Auxv) == 0 {
		t.Errorf("eip %#x in %+v; auxv %d entries", r.Eip, f, len(c.Auxv))
	}
	if n, _ := c.ReadMemory(r.Esp, make([]byte, 4)); n != 4 {
		t.Errorf("the stack at esp %#x is not in the core", r.Esp)
	}
}

// FuzzParseNotesI386 is FuzzParseNotes for a 32-bit core: any note bytes
// give threads whose register sets have i386's 17 words, within the
// budget. Seeded with the notes of LLDB's i386 core.
func FuzzParseNotesI386(f *testing.F) {
	c, err := Parse(lldbCore(f, "thread_crash-linux-i386"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range noteSegments(c) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			c := &Core{Machine: elf.EM_386, ByteOrder: le, Class: elf.ELFCLASS32, lay: &layout32}
			np := noteParser{core: c, walkBudget: maxNotes, copyBudget: maxNoteCopy}
			np.parse(data, 0x1000)
			np.finish(0)
			for _, th := range c.Threads {
				if th.Regs != nil && len(th.Regs) != nRegsI386 {
					t.Fatalf("%d registers", len(th.Regs))
				}
			}
			for i, fl := range c.Files {
				if fl.End < fl.Start || fl.End >= 1<<32 || i > 0 && fl.Start < c.Files[i-1].Start {
					t.Fatalf("file %d: %+v, 32-bit words sorted by start", i, fl)
				}
			}
		})
	})
}

// noteSegments returns the bytes of c's PT_NOTE segments.
func noteSegments(c *Core) [][]byte {
	var out [][]byte
	l := c.lay
	for i := 0; ; i++ {
		off := int(c.ByteOrder.Uint32(c.data[l.ePhoff:])) + i*l.phdrSize
		if i >= int(c.ByteOrder.Uint16(c.data[l.ePhnum:])) || off+l.phdrSize > len(c.data) {
			return out
		}
		typ, seg, _ := l.readPhdr(newCursor(c.data[off:off+l.phdrSize], c.ByteOrder, 0))
		if typ == elf.PT_NOTE && seg.Offset+seg.Filesz <= uint64(len(c.data)) {
			out = append(out, c.data[seg.Offset:seg.Offset+seg.Filesz])
		}
	}
}
