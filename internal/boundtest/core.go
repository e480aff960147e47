package boundtest

import (
	"debug/elf"
	"encoding/binary"
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

// X86Core lays out a minimal Linux x86-64 ELF core: one PT_NOTE with an
// NT_PRSTATUS per thread (SIGSEGV for the first), then the loads. It is for
// inputs no kernel writes, crafted to exercise a bound.
func X86Core(threads []CoreThread, loads []CoreLoad) []byte {
	le := binary.LittleEndian
	var notes []byte
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
