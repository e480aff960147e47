package object

import (
	"debug/elf"
	"encoding/binary"

	"github.com/faultline-dev/faultline/analysis/regular"
)

// Caps on what noteBuildID reads from a file it has not checked.
const (
	maxPhdrs     = 4096
	maxNoteBytes = 1 << 20
)

// NoteBuildID reads the NT_GNU_BUILD_ID of the ELF file at path from its
// PT_NOTE segments with positioned reads of the ELF header, the program
// headers and the notes alone (System V ABI, "ELF Header" and "Program
// Header"). ok is false when the file is not a readable ELF file or no
// segment holds the note; the caller then reads the file whole.
func NoteBuildID(path string) (id []byte, ok bool) {
	f, _, err := regular.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var eh [64]byte
	if n, _ := f.ReadAt(eh[:], 0); n < 52 || string(eh[:4]) != elf.ELFMAG {
		return nil, false
	}
	var bo binary.ByteOrder
	switch elf.Data(eh[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		bo = binary.BigEndian
	default:
		return nil, false
	}
	var phoff uint64
	var phentsize, phnum int
	is64 := elf.Class(eh[elf.EI_CLASS]) == elf.ELFCLASS64
	if is64 {
		phoff, phentsize, phnum = bo.Uint64(eh[0x20:]), int(bo.Uint16(eh[0x36:])), int(bo.Uint16(eh[0x38:]))
	} else {
		phoff, phentsize, phnum = uint64(bo.Uint32(eh[0x1c:])), int(bo.Uint16(eh[0x2a:])), int(bo.Uint16(eh[0x2c:]))
	}
	if phnum == 0 || phnum > maxPhdrs || phentsize < 32 || phentsize > 256 || phoff > 1<<40 {
		return nil, false
	}
	ph := make([]byte, phnum*phentsize)
	if n, _ := f.ReadAt(ph, int64(phoff)); n != len(ph) {
		return nil, false
	}
	for i := 0; i < phnum; i++ {
		e := ph[i*phentsize:]
		if elf.ProgType(bo.Uint32(e)) != elf.PT_NOTE {
			continue
		}
		var off, size uint64
		if is64 {
			off, size = bo.Uint64(e[8:]), bo.Uint64(e[32:])
		} else {
			off, size = uint64(bo.Uint32(e[4:])), uint64(bo.Uint32(e[16:]))
		}
		if size == 0 || size > maxNoteBytes || off > 1<<40 {
			continue
		}
		notes := make([]byte, size)
		if n, _ := f.ReadAt(notes, int64(off)); uint64(n) != size {
			continue
		}
		if id := findBuildIDNote(notes, bo); id != nil {
			return id, true
		}
	}
	return nil, false
}
