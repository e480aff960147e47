package elfcore

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzParseNotes feeds arbitrary bytes to the note parser as the contents of
// a PT_NOTE segment of an x86-64 or aarch64 core.
func FuzzParseNotes(f *testing.F) {
	f.Add(false, encodeNotes(goodNotes()))
	f.Fuzz(func(t *testing.T, aarch64 bool, data []byte) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			c := &Core{Machine: elf.EM_X86_64, ByteOrder: le, Class: elf.ELFCLASS64, lay: &layout64}
			if aarch64 {
				c.Machine = elf.EM_AARCH64
			}
			np := noteParser{core: c, walkBudget: maxNotes, copyBudget: maxNoteCopy}
			np.parse(data, 0x1000)
			np.finish(0)
			if len(c.Threads) > maxThreads || len(c.Threads) > len(data)/12 {
				t.Fatalf("%d threads from %d bytes", len(c.Threads), len(data))
			}
			for _, th := range c.Threads {
				if th.Regs != nil && len(th.Regs) != c.nRegs() {
					t.Fatalf("%d registers", len(th.Regs))
				}
				if len(th.FPRegs) > maxRegsetBytes || len(th.XState) > maxRegsetBytes {
					t.Fatalf("regset over the cap")
				}
			}
			for i := 1; i < len(c.Files); i++ {
				if c.Files[i].Start < c.Files[i-1].Start {
					t.Fatalf("Files not sorted")
				}
			}
		})
	})
}

// FuzzOpen parses arbitrary bytes as a whole core and exercises the memory
// reader on what it found.
func FuzzOpen(f *testing.F) {
	f.Add(buildCore(elf.EM_X86_64, [][]synthNote{goodNotes()}, goodLoads()))
	f.Add([]byte{})
	f.Add(replicatedNoteCoreOf(2000, 64<<10)) // note amplification: over the allocation budget before issue 18
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			c, err := Parse(data)
			if err != nil {
				if c != nil {
					t.Fatalf("Parse returned a Core with error %v", err)
				}
				return
			}
			for _, s := range c.Segments {
				if s.Filesz > 0 && (s.Offset > uint64(len(data)) || s.Filesz > uint64(len(data))-s.Offset) {
					t.Fatalf("segment %+v outside the file", s)
				}
				if s.Filesz > s.Memsz {
					t.Fatalf("segment %+v has filesz > memsz", s)
				}
			}
			buf := make([]byte, 64)
			probe := func(addr uint64) {
				n, err := c.ReadMemory(addr, buf)
				if n > len(buf) || (n < len(buf) && err == nil) {
					t.Fatalf("ReadMemory(%#x) = %d, %v", addr, n, err)
				}
				c.Slice(addr, 64)
				c.BuildIDAt(addr)
				c.FileAt(addr)
			}
			for i, s := range c.Segments {
				if i >= 64 {
					break
				}
				probe(s.Vaddr)
				probe(s.End() - 8)
			}
			for i, fl := range c.Files {
				if i >= 64 {
					break
				}
				probe(fl.Start)
			}
			c.ExecFn()
			for i := range c.Threads {
				c.Threads[i].X86_64()
				c.Threads[i].AArch64()
				c.Threads[i].PC()
			}
		})
	})
}

// TestWriteFuzzSeeds regenerates the checked-in seed corpora from synthetic
// cores and from a trimmed copy of a real kernel core. Run with
// ELFCORE_WRITE_SEEDS=1.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("ELFCORE_WRITE_SEEDS") == "" {
		t.Skip("set ELFCORE_WRITE_SEEDS=1 to rewrite testdata/fuzz")
	}
	write := func(target, name string, data []byte, pre ...string) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "go test fuzz v1\n" + strings.Join(pre, "") + fmt.Sprintf("[]byte(%q)\n", data)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := buildCore(elf.EM_X86_64, [][]synthNote{goodNotes()}, goodLoads())
	write("FuzzOpen", "synthetic-x86-64", good)
	noteOff := le.Uint64(good[ehdr64Size+8:])
	write("FuzzOpen", "synthetic-truncated", good[:noteOff+400])
	write("FuzzParseNotes", "synthetic", encodeNotes(goodNotes()), "bool(false)\n")
	aregs := make([]uint64, nRegsAArch64)
	write("FuzzParseNotes", "synthetic-aarch64", encodeNotes([]synthNote{
		{"CORE", NT_PRSTATUS, prstatusDesc(nRegsAArch64, 3, 11, aregs...)},
		{"LINUX", NT_ARM_TLS, make([]byte, 8)},
	}), "bool(true)\n")

	// A real core: its notes and the first page of every ELF mapping (for
	// BuildIDAt); not the stack, which holds this machine's environment.
	rc := realCore(t)
	c := openCore(t, rc.core)
	var notes [][]byte
	for i := 0; i < int(le.Uint16(c.data[56:])); i++ {
		ph := c.data[ehdr64Size+i*phdr64Size:]
		if elf.ProgType(le.Uint32(ph)) == elf.PT_NOTE {
			off, size := le.Uint64(ph[8:]), le.Uint64(ph[32:])
			notes = append(notes, c.data[off:off+size])
			write("FuzzParseNotes", "real-x86-64", c.data[off:off+size], "bool(false)\n")
		}
	}
	var loads []synthLoad
	page := func(addr uint64) {
		addr &^= 0xfff
		b, err := c.Slice(addr, 0x1000)
		if err == nil {
			loads = append(loads, synthLoad{vaddr: addr, memsz: 0x1000, data: b})
		}
	}
	for _, fl := range c.Files {
		if fl.FileOffset == 0 {
			page(fl.Start)
		}
	}
	write("FuzzOpen", "real-x86-64-trimmed", buildCoreRaw(elf.EM_X86_64, notes, loads))
}
