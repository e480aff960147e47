package elfcore

import (
	"debug/elf"
	"encoding/binary"
)

// Caps for reading a mapped object's headers out of core memory.
const (
	maxModulePhdrs     = 512      // program headers of a mapped ELF object
	maxModuleNoteSize  = 64 << 10 // one PT_NOTE segment of a mapped object
	maxModulePhentsize = 256      // e_phentsize (56 in every real ELF64 file, 32 in ELF32)
)

// BuildIDAt returns the GNU build-id (the NT_GNU_BUILD_ID descriptor) of the
// ELF object mapped at start, read from the ELF header, program headers and
// PT_NOTE segments that the kernel dumped into the core (coredump_filter
// bit 4 dumps the first page of every ELF mapping). It returns nil when
// those bytes are not in the core or carry no build-id.
func (c *Core) BuildIDAt(start uint64) []byte {
	var ident [64]byte // the larger (ELF64) header
	if n, _ := c.ReadMemory(start, ident[:]); n < elf.EI_NIDENT || string(ident[:4]) != elf.ELFMAG {
		return nil
	}
	class := elf.Class(ident[elf.EI_CLASS])
	if class != elf.ELFCLASS64 && class != elf.ELFCLASS32 {
		return nil
	}
	l := layoutOf(class)
	if n, _ := c.ReadMemory(start, ident[:l.ehdrSize]); n < l.ehdrSize {
		return nil
	}
	var order binary.ByteOrder = binary.LittleEndian
	if elf.Data(ident[elf.EI_DATA]) == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	h := newCursor(ident[:l.ehdrSize], order, 0)
	h.Seek(l.ePhoff)
	phoff := h.Uint(l.word)
	h.Seek(l.ePhentsize)
	phentsize := uint64(h.U16())
	phnum := uint64(h.U16())
	if phentsize < uint64(l.phdrSize) || phentsize > maxModulePhentsize || phnum == 0 || phnum > maxModulePhdrs || phoff > 1<<32 {
		return nil
	}
	table := make([]byte, phnum*phentsize)
	n, _ := c.ReadMemory(start+phoff, table)
	phnum = uint64(n) / phentsize

	type phdr struct {
		typ                       elf.ProgType
		off, vaddr, filesz, align uint64
	}
	var notes []phdr
	base, haveBase := uint64(0), false
	for i := uint64(0); i < phnum; i++ {
		typ, seg, align := l.readPhdr(newCursor(table[i*phentsize:(i+1)*phentsize], order, 0))
		p := phdr{typ: typ, off: seg.Offset, vaddr: seg.Vaddr, filesz: seg.Filesz, align: align}
		switch p.typ {
		case elf.PT_LOAD:
			// The first PT_LOAD maps the start of the file at start:
			// vaddr v is at start + v - (p_vaddr - p_offset).
			if !haveBase {
				base, haveBase = p.vaddr-p.off, true
			}
		case elf.PT_NOTE:
			notes = append(notes, p)
		}
	}
	for _, p := range notes {
		if p.filesz == 0 || p.filesz > maxModuleNoteSize {
			continue
		}
		buf := make([]byte, p.filesz)
		addr := start + p.off
		if haveBase {
			addr = start + (p.vaddr - base)
		}
		if n, _ := c.ReadMemory(addr, buf); uint64(n) < p.filesz {
			continue
		}
		var id []byte
		walkNotes(buf, 0, order, p.align, nil, func(n rawNote) bool {
			if n.name == "GNU" && n.typ == NT_GNU_BUILD_ID {
				id = append([]byte(nil), n.desc...)
				return false
			}
			return true
		})
		if id != nil {
			return id
		}
	}
	return nil
}
