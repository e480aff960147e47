package boundtest

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Indexes of x86-64 struct user_regs_struct (<sys/user.h>), the register
// block of NT_PRSTATUS.
const (
	RegRBP = 4
	RegRIP = 16
	RegRSP = 19
)

// CoreThread is one thread of a crafted x86-64 core.
type CoreThread struct {
	LWP  int32
	Regs [27]uint64 // user_regs_struct
}

// CoreLoad is one PT_LOAD of a crafted core.
type CoreLoad struct {
	Vaddr uint64
	Flags elf.ProgFlag
	Data  []byte
}

// CoreFile is one NT_FILE entry of a crafted core: a file mapped at
// [Start, End) from page Offset.
type CoreFile struct {
	Start, End, Offset uint64
	Path               string
}

// X86Core lays out a minimal Linux x86-64 ELF core: one PT_NOTE with an
// NT_PRSTATUS per thread (SIGSEGV for the first), then the loads. It is for
// inputs no kernel writes, crafted to exercise a bound.
func X86Core(threads []CoreThread, loads []CoreLoad) []byte {
	return X86CoreFiles(threads, loads, nil)
}

// X86CoreFiles is X86Core with an NT_FILE note listing files (the mapped
// files, as the kernel writes it: count, page size, the ranges, then the
// NUL-terminated names). A file whose range no load covers is one whose
// pages the core lacks.
func X86CoreFiles(threads []CoreThread, loads []CoreLoad, files []CoreFile) []byte {
	le := binary.LittleEndian
	notes := ntFile(files)
	for i, t := range threads {
		desc := make([]byte, 336)
		if i == 0 {
			le.PutUint16(desc[12:], 11) // pr_cursig
		}
		le.PutUint32(desc[32:], uint32(t.LWP))
		for j, v := range t.Regs {
			le.PutUint64(desc[112+8*j:], v)
		}
		notes = le.AppendUint32(notes, 5)
		notes = le.AppendUint32(notes, uint32(len(desc)))
		notes = le.AppendUint32(notes, uint32(elf.NT_PRSTATUS))
		notes = append(notes, "CORE\x00\x00\x00\x00"...)
		notes = append(notes, desc...)
	}
	nph := 1 + len(loads)
	b := make([]byte, 64+56*nph)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(b[16:], uint16(elf.ET_CORE))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[32:], 64)
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[54:], 56)
	le.PutUint16(b[56:], uint16(nph))
	phdr := func(i int, typ elf.ProgType, flags elf.ProgFlag, off, vaddr, size uint64) {
		p := b[64+56*i:]
		le.PutUint32(p, uint32(typ))
		le.PutUint32(p[4:], uint32(flags))
		le.PutUint64(p[8:], off)
		le.PutUint64(p[16:], vaddr)
		le.PutUint64(p[32:], size)
		le.PutUint64(p[40:], size)
		le.PutUint64(p[48:], 4)
	}
	phdr(0, elf.PT_NOTE, 0, uint64(len(b)), 0, uint64(len(notes)))
	body := notes
	for i, l := range loads {
		for (len(b)+len(body))%4096 != 0 {
			body = append(body, 0)
		}
		phdr(1+i, elf.PT_LOAD, l.Flags, uint64(len(b)+len(body)), l.Vaddr, uint64(len(l.Data)))
		body = append(body, l.Data...)
	}
	return append(b, body...)
}

// ntFile is the NT_FILE note of files ("CORE", type 0x46494c45), empty
// when there are none.
func ntFile(files []CoreFile) []byte {
	if len(files) == 0 {
		return nil
	}
	le := binary.LittleEndian
	desc := le.AppendUint64(nil, uint64(len(files)))
	desc = le.AppendUint64(desc, 4096)
	for _, f := range files {
		desc = le.AppendUint64(desc, f.Start)
		desc = le.AppendUint64(desc, f.End)
		desc = le.AppendUint64(desc, f.Offset)
	}
	for _, f := range files {
		desc = append(append(desc, f.Path...), 0)
	}
	for len(desc)%4 != 0 {
		desc = append(desc, 0)
	}
	note := le.AppendUint32(nil, 5)
	note = le.AppendUint32(note, uint32(len(desc)))
	note = le.AppendUint32(note, 0x46494c45) // NT_FILE
	note = append(note, "CORE\x00\x00\x00\x00"...)
	return append(note, desc...)
}

// HostilePathsCore writes into dir a core whose mapped files (NT_FILE)
// name what must never be read: /dev/stdin and a /dev/ + slashes + stdin
// spelling of it (a server's own protocol stream), a FIFO nobody writes
// (made in dir), /dev/zero, a directory and /proc/self/fd/0. The core
// lacks the mappings' pages, so a reader would look at the files
// themselves. It returns the core's path.
func HostilePathsCore(t testing.TB, dir string) string {
	t.Helper()
	fifo := filepath.Join(dir, "libfifo.so")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var regs [27]uint64
	regs[RegRIP], regs[RegRSP] = 0x400100, 0x7ffc0000f000
	var files []CoreFile
	for i, p := range []string{"/dev/stdin", "/dev////////stdin", fifo, "/dev/zero", dir, "/proc/self/fd/0"} {
		base := 0x400000 + uint64(i)*0x100000
		files = append(files, CoreFile{Start: base, End: base + 0x2000, Path: p})
	}
	stack := CoreLoad{Vaddr: 0x7ffc0000e000, Flags: elf.PF_R | elf.PF_W, Data: make([]byte, 0x2000)}
	core := filepath.Join(dir, "core")
	if err := os.WriteFile(core, X86CoreFiles([]CoreThread{{LWP: 4242, Regs: regs}}, []CoreLoad{stack}, files), 0o644); err != nil {
		t.Fatal(err)
	}
	return core
}
