package elfcore

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"os"
)

// The core layout WriteCore writes (System V gABI chapter 4; linux
// fs/binfmt_elf.c): 64-bit little-endian x86-64, 4 KiB pages.
const (
	ehdrSize  = 64   // sizeof(Elf64_Ehdr)
	phdrSize  = 56   // sizeof(Elf64_Phdr)
	pageSize  = 4096 // PT_LOAD alignment, NT_FILE page size
	noteAlign = 4    // note header, name and descriptor alignment
	// CoreNoteName names the classic SVR4 notes (NT_PRSTATUS, ...).
	CoreNoteName = "CORE"
)

// LoadSegment is one PT_LOAD of a core being written: Memsz bytes of
// process memory at Vaddr, of which the first Filesz are dumped.
type LoadSegment struct {
	Vaddr, Memsz, Filesz uint64
	Flags                elf.ProgFlag
}

// FileMapping is one NT_FILE entry: [Start, End) maps the file at Offset.
type FileMapping struct {
	Start, End, Offset uint64
	Path               string
}

// AppendNote appends an ELF note named CoreNoteName of type typ (NT_PRSTATUS,
// NT_PRPSINFO, ...) to w, padded as the gABI requires.
func AppendNote(w *bytes.Buffer, typ uint32, desc []byte) {
	name := CoreNoteName + "\x00"
	binary.Write(w, binary.LittleEndian, [3]uint32{uint32(len(name)), uint32(len(desc)), typ})
	w.WriteString(name)
	w.Write(make([]byte, pad4(len(name))))
	w.Write(desc)
	w.Write(make([]byte, pad4(len(desc))))
}

func pad4(n int) int { return (noteAlign - n%noteAlign) % noteAlign }

// struct elf_prstatus and struct elf_prpsinfo on x86-64 (linux/elfcore.h;
// layout64 in layout.go has the offsets the reader uses).
const (
	prstatusSize   = 336
	prstatusRegOff = 112
	prpsinfoSize   = 136
	prstatusPid    = 32
	prstatusPPid   = 36
	prstatusPgrp   = 40
	prstatusSid    = 44
	prpsinfoState  = 0
	prpsinfoSname  = 1
	prpsinfoPid    = 24
	prpsinfoPPid   = 28
	prpsinfoPgrp   = 32
	prpsinfoSid    = 36
	prpsinfoFname  = 40 // char pr_fname[16]
	prpsinfoArgs   = 56 // char pr_psargs[80]
)

// ProcessIDs are a process's parent, process group and session.
type ProcessIDs struct{ PPid, Pgrp, Sid int }

// PRStatusX86 is the NT_PRSTATUS descriptor of thread tid of a process
// with ids, regs its user_regs_struct.
func PRStatusX86(tid int, ids ProcessIDs, regs []byte) []byte {
	b := make([]byte, prstatusSize)
	binary.LittleEndian.PutUint32(b[prstatusPid:], uint32(tid))
	binary.LittleEndian.PutUint32(b[prstatusPPid:], uint32(ids.PPid))
	binary.LittleEndian.PutUint32(b[prstatusPgrp:], uint32(ids.Pgrp))
	binary.LittleEndian.PutUint32(b[prstatusSid:], uint32(ids.Sid))
	copy(b[prstatusRegOff:], regs)
	return b
}

// PRPSInfoX86 is the NT_PRPSINFO descriptor of a sleeping process: its
// pid and ids, command name and arguments (cut to the kernel's field sizes).
func PRPSInfoX86(pid int, ids ProcessIDs, comm, args []byte) []byte {
	b := make([]byte, prpsinfoSize)
	b[prpsinfoState], b[prpsinfoSname] = 1, 'S' // sleeping
	binary.LittleEndian.PutUint32(b[prpsinfoPid:], uint32(pid))
	binary.LittleEndian.PutUint32(b[prpsinfoPPid:], uint32(ids.PPid))
	binary.LittleEndian.PutUint32(b[prpsinfoPgrp:], uint32(ids.Pgrp))
	binary.LittleEndian.PutUint32(b[prpsinfoSid:], uint32(ids.Sid))
	copy(b[prpsinfoFname:prpsinfoArgs-1], comm)
	copy(b[prpsinfoArgs:prpsinfoSize-1], args)
	return b
}

// NTFileDesc is the NT_FILE descriptor: count, page size, (start, end,
// page offset) per file mapping, then the paths.
func NTFileDesc(files []FileMapping) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	binary.Write(&b, le, [2]uint64{uint64(len(files)), pageSize})
	for _, m := range files {
		binary.Write(&b, le, [3]uint64{m.Start, m.End, m.Offset / pageSize})
	}
	for _, m := range files {
		b.WriteString(m.Path)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// WriteCore writes an x86-64 ELF core to path: the ELF header, a PT_NOTE
// with notes, then a PT_LOAD per segment with its first Filesz bytes read
// from mem (page-aligned, as the kernel does; unreadable bytes as zeros).
func WriteCore(path string, notes []byte, loads []LoadSegment, mem io.ReaderAt) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	nph := 1 + len(loads)
	noteOff := uint64(ehdrSize + phdrSize*nph)
	off := (noteOff + uint64(len(notes)) + pageSize - 1) &^ (pageSize - 1)
	w.Write(coreHeader(nph))
	w.Write(progHeader(elf.PT_NOTE, 0, noteOff, 0, uint64(len(notes)), 0, noteAlign))
	offsets := make([]uint64, len(loads))
	for i, l := range loads {
		offsets[i] = off
		w.Write(progHeader(elf.PT_LOAD, l.Flags, off, l.Vaddr, l.Filesz, l.Memsz, pageSize))
		off += l.Filesz
	}
	w.Write(notes)
	pos := noteOff + uint64(len(notes))
	buf := make([]byte, 1<<20)
	for i, l := range loads {
		w.Write(make([]byte, offsets[i]-pos))
		for done := uint64(0); done < l.Filesz; {
			chunk := buf[:min(uint64(len(buf)), l.Filesz-done)]
			n, _ := mem.ReadAt(chunk, int64(l.Vaddr+done))
			clear(chunk[n:]) // unreadable pages read as zeros, as in the kernel's dump
			w.Write(chunk)
			done += uint64(len(chunk))
		}
		pos = offsets[i] + l.Filesz
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// coreHeader is the Elf64_Ehdr of an x86-64 core with nph program headers.
func coreHeader(nph int) []byte {
	le := binary.LittleEndian
	eh := make([]byte, ehdrSize)
	copy(eh, elf.ELFMAG)
	eh[elf.EI_CLASS], eh[elf.EI_DATA], eh[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	eh[elf.EI_OSABI] = byte(elf.ELFOSABI_NONE)
	le.PutUint16(eh[16:], uint16(elf.ET_CORE))
	le.PutUint16(eh[18:], uint16(elf.EM_X86_64))
	le.PutUint32(eh[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(eh[32:], ehdrSize) // e_phoff
	le.PutUint16(eh[52:], ehdrSize) // e_ehsize
	le.PutUint16(eh[54:], phdrSize) // e_phentsize
	le.PutUint16(eh[56:], uint16(min(nph, 0xffff)))
	return eh
}

// progHeader is one Elf64_Phdr.
func progHeader(typ elf.ProgType, flags elf.ProgFlag, offset, vaddr, filesz, memsz, align uint64) []byte {
	le := binary.LittleEndian
	b := make([]byte, phdrSize)
	le.PutUint32(b[0:], uint32(typ))
	le.PutUint32(b[4:], uint32(flags))
	le.PutUint64(b[8:], offset)
	le.PutUint64(b[16:], vaddr)
	le.PutUint64(b[32:], filesz)
	le.PutUint64(b[40:], memsz)
	le.PutUint64(b[48:], align)
	return b
}
