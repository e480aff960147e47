package gitsrc

import (
	"debug/elf"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// TestSourcesModuleIsFIFO (issue 24 items 1, 2): a core whose mapped
// module has its ELF header in the core (so it is kept as a module) but
// whose path is a FIFO nobody writes: `sources` (which reads a module's
// .note.package, version strings and line tables) and `analyze` finish
// instead of waiting on the FIFO.
func TestSourcesModuleIsFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "libplanted.so.1")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var regs [27]uint64
	regs[boundtest.RegRIP], regs[boundtest.RegRSP] = 0x400100, 0x7ffc0000f000
	head := make([]byte, 0x1000)
	copy(head, elf.ELFMAG)
	head[elf.EI_CLASS], head[elf.EI_DATA], head[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	loads := []boundtest.CoreLoad{{Vaddr: 0x400000, Flags: elf.PF_R | elf.PF_X, Data: head},
		{Vaddr: 0x7ffc0000e000, Flags: elf.PF_R | elf.PF_W, Data: make([]byte, 0x2000)}}
	files := []boundtest.CoreFile{{Start: 0x400000, End: 0x402000, Path: fifo}}
	core := filepath.Join(dir, "core")
	if err := os.WriteFile(core, boundtest.X86CoreFiles([]boundtest.CoreThread{{LWP: 7, Regs: regs}}, loads, files), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"analyze", "--json", "--offline", core}, {"sources", "--json", "--offline", "--no-review", core}} {
		r := boundtest.Run(t, boundtest.Cmd{Args: args, Env: []string{"XDG_CACHE_HOME=" + t.TempDir()}, Limits: boundtest.Limits{Wall: 30 * time.Second}})
		if r.Killed != "" || r.Wall > 15*time.Second {
			t.Errorf("%s: bound: done within 15 s; got %v\n%s", args[0], r, r.Stderr)
		}
	}
}
