package elfcore

import (
	"debug/elf"

	"github.com/faultline-dev/faultline/analysis/internal/cursor"
)

// layout is where the fields this package reads lie for one ELF class:
// the ELF, program and section headers (gABI chapters 4 and 5) and the
// kernel's core notes, whose C types are built from long and pointers
// (linux/include/linux/elfcore.h; the compat_ types of
// linux/fs/compat_binfmt_elf.c for a 32-bit process, checked against the
// i386 cores the kernel and qemu-user write and against gdb's
// i386-linux-tdep.c and elfutils' linux-core-note.c).
type layout struct {
	word int // sizeof(long) and of a pointer: 8 or 4

	ehdrSize, phdrSize, shdrSize int
	ePhoff, eShoff               int // offsets in the ELF header
	ePhentsize, ePhnum           int
	shInfo                       int // sh_info in a section header

	// struct elf_prstatus: the end of pr_sid (the least worth keeping),
	// pr_sigpend and pr_reg.
	prstatusIDEnd, prSigpend, prReg int
	// struct elf_prpsinfo: its size, pr_uid (uid and gid are 16-bit in
	// the i386 ABI's __kernel_uid_t), pr_fname.
	prpsinfoSize, prUID, uidSize, prFname int
	// siginfo_t: where the union starts (after 3 ints, aligned to a
	// pointer).
	siginfoUnion int
}

// ELF64 header sizes (gABI chapter 4, "ELF Header", and chapter 5,
// "Program Header").
const (
	ehdr64Size = 64
	phdr64Size = 56
	shdr64Size = 64
)

var (
	layout64 = layout{word: 8, ehdrSize: ehdr64Size, phdrSize: phdr64Size, shdrSize: shdr64Size,
		ePhoff: 32, eShoff: 40, ePhentsize: 54, ePhnum: 56, shInfo: 44,
		prstatusIDEnd: 48, prSigpend: 16, prReg: 112,
		prpsinfoSize: 136, prUID: 16, uidSize: 4, prFname: 40,
		siginfoUnion: 16}
	layout32 = layout{word: 4, ehdrSize: 52, phdrSize: 32, shdrSize: 40,
		ePhoff: 28, eShoff: 32, ePhentsize: 42, ePhnum: 44, shInfo: 28,
		prstatusIDEnd: 40, prSigpend: 16, prReg: 72,
		prpsinfoSize: 124, prUID: 8, uidSize: 2, prFname: 28,
		siginfoUnion: 12}
)

// layoutOf is the layout of an ELF class.
func layoutOf(class elf.Class) *layout {
	if class == elf.ELFCLASS32 {
		return &layout32
	}
	return &layout64
}

// readPhdr decodes one program header of the class: ELF64 puts p_flags
// second, ELF32 after p_memsz.
func (l *layout) readPhdr(c *cursor.Cursor) (typ elf.ProgType, seg Segment, align uint64) {
	typ = elf.ProgType(c.U32())
	if l.word == 8 {
		seg.Flags = elf.ProgFlag(c.U32())
	}
	seg.Offset = c.Uint(l.word)
	seg.Vaddr = c.Uint(l.word)
	c.Skip(l.word) // p_paddr
	seg.Filesz = c.Uint(l.word)
	seg.Memsz = c.Uint(l.word)
	if l.word == 4 {
		seg.Flags = elf.ProgFlag(c.U32())
	}
	align = c.Uint(l.word)
	return typ, seg, align
}
