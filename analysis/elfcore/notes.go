package elfcore

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// Note types written into Linux core dumps (linux/include/uapi/linux/elf.h).
// Notes named "CORE" carry the classic SVR4 types; "LINUX" notes carry the
// extra register sets.
const (
	NT_PRSTATUS     = 1          // struct elf_prstatus, one per thread, starts the thread's notes
	NT_PRFPREG      = 2          // user_fpregs_struct (x86-64 FXSAVE area, aarch64 user_fpsimd_state)
	NT_PRPSINFO     = 3          // struct elf_prpsinfo
	NT_AUXV         = 6          // the auxiliary vector
	NT_SIGINFO      = 0x53494749 // "SIGI": siginfo_t of the signal that killed the process
	NT_FILE         = 0x46494c45 // "FILE": file-backed mappings
	NT_X86_XSTATE   = 0x202      // "LINUX": x86 XSAVE area
	NT_ARM_TLS      = 0x401      // "LINUX": aarch64 TPIDR_EL0
	NT_ARM_SVE      = 0x405      // "LINUX": aarch64 SVE registers
	NT_ARM_PAC_MASK = 0x406      // "LINUX": aarch64 pointer-authentication masks

	NT_GNU_BUILD_ID = 3 // "GNU": build-id (in mapped objects, not core notes)
)

// Note is one note of a core that this package does not decode itself, kept
// raw for the thread it follows (for example NT_ARM_TLS or NT_ARM_PAC_MASK).
type Note struct {
	Name string
	Type uint32
	Desc []byte // a copy, at most 1 MiB
}

// rawNote is one note as found in the file.
type rawNote struct {
	name string
	typ  uint32
	desc []byte // sub-slice of the note segment
	off  int64  // file offset of the note header
}

// walkNotes calls fn for each note in data, a PT_NOTE segment whose first
// byte is at file offset base. Names and descriptors are padded to align
// bytes (4 in Linux cores; gABI "Note Section"). It stops at the first note
// that does not fit, returning a Problem describing it, when fn returns
// false, or after *budget notes (budget is shared by all the segments of a
// file; nil means maxNotes for this segment alone).
func walkNotes(data []byte, base int64, order binary.ByteOrder, align uint64, budget *int, fn func(rawNote) bool) *Problem {
	if align != 8 {
		align = 4
	}
	if budget == nil {
		n := maxNotes
		budget = &n
	}
	off := uint64(0)
	size := uint64(len(data))
	for ; off < size; *budget-- {
		if *budget <= 0 {
			return &Problem{Off: base + int64(off), Msg: fmt.Sprintf("more than %d notes; ignoring the rest", maxNotes)}
		}
		if size-off < 12 {
			if allZero(data[off:]) {
				return nil // padding at the end of the segment
			}
			return &Problem{Off: base + int64(off), Msg: fmt.Sprintf("truncated note header (%d bytes left)", size-off)}
		}
		namesz := uint64(order.Uint32(data[off:]))
		descsz := uint64(order.Uint32(data[off+4:]))
		typ := order.Uint32(data[off+8:])
		nameOff := off + 12
		descOff := nameOff + alignUp(namesz, align)
		end := descOff + alignUp(descsz, align)
		if descOff > size || descsz > size-descOff {
			return &Problem{Off: base + int64(off), Msg: fmt.Sprintf("note type %#x with name size %d and descriptor size %d extends past the note segment (%d bytes left)", typ, namesz, descsz, size-off)}
		}
		name := data[nameOff : nameOff+namesz]
		for len(name) > 0 && name[len(name)-1] == 0 {
			name = name[:len(name)-1]
		}
		if len(name) > maxNoteName { // no note this package reads has a long name
			name = nil
		}
		n := rawNote{name: string(name), typ: typ, desc: data[descOff : descOff+descsz], off: base + int64(off)}
		if !fn(n) {
			return nil
		}
		if end > size { // the last descriptor's padding may be missing
			end = size
		}
		off = end
	}
	return nil
}

// maxNoteName is the longest note name kept; longer ones read as "".
const maxNoteName = 64

func alignUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// noteParser assigns the notes of a core to the process and its threads, in
// the order linux/fs/binfmt_elf.c write_note_info writes them: each thread's
// NT_PRSTATUS, for the first thread the process-wide notes (NT_PRPSINFO,
// NT_SIGINFO, NT_AUXV, NT_FILE), then that thread's other register sets.
//
// Its work is bounded per core, not per segment: walkBudget notes in all,
// copyBudget bytes copied out of register-set notes in all, maxThreads
// threads; a note range named by several program headers is parsed once
// (the caller skips repeats), so a small file cannot multiply one large
// note into gigabytes.
type noteParser struct {
	core       *Core
	cur        int  // index of the thread later regset notes belong to; -1 if none
	dropped    bool // the thread cap was reached: ignore per-thread notes
	orphan     bool // a regset note came before any NT_PRSTATUS (reported once)
	started    bool
	walkBudget int // notes left to walk
	copyBudget int // bytes left to copy out of notes
	overCopy   bool
	repeated   int // program headers naming an already parsed note range
}

func (p *noteParser) parse(data []byte, base int64) {
	if !p.started {
		p.cur, p.started = -1, true
	}
	c := p.core
	if p.walkBudget <= 0 {
		return // reported once by walkNotes
	}
	if prob := walkNotes(data, base, c.ByteOrder, 4, &p.walkBudget, p.note); prob != nil {
		c.addProblem(*prob)
	}
}

func (p *noteParser) finish(phoff int64) {
	c := p.core
	if p.repeated > 0 {
		c.problem(phoff, "%d PT_NOTE program headers repeat a note range already read; read once", p.repeated)
	}
	if len(c.Threads) == 0 && p.started {
		c.problem(0, "core has no NT_PRSTATUS note: no threads or registers")
	}
}

func (p *noteParser) note(n rawNote) bool {
	c := p.core
	switch {
	case n.name == "CORE" && n.typ == NT_PRSTATUS:
		if len(c.Threads) >= maxThreads {
			if !p.dropped {
				c.problem(n.off, "more than %d threads; ignoring the rest", maxThreads)
			}
			p.dropped, p.cur = true, -1
			return true
		}
		if len(n.desc) < c.lay.prstatusIDEnd {
			c.problem(n.off, "NT_PRSTATUS of %d bytes is too short to identify a thread; ignored", len(n.desc))
			p.cur = -1
			return true
		}
		c.Threads = append(c.Threads, c.decodePrstatus(n))
		p.cur = len(c.Threads) - 1
	case n.name == "CORE" && n.typ == NT_PRPSINFO:
		if c.Process == nil {
			c.Process = c.decodePrpsinfo(n)
		}
	case n.name == "CORE" && n.typ == NT_SIGINFO:
		si := c.decodeSiginfo(n)
		if si == nil {
			return true
		}
		if c.Signal == nil {
			c.Signal = si
		}
		if t := p.thread(n); t != nil && t.SigInfo == nil {
			t.SigInfo = si
		}
	case n.name == "CORE" && n.typ == NT_AUXV:
		if c.Auxv == nil {
			c.Auxv = c.decodeAuxv(n)
		}
	case n.name == "CORE" && n.typ == NT_FILE:
		if c.Files == nil {
			c.Files = c.decodeFiles(n)
		}
	case n.name == "CORE" && n.typ == NT_PRFPREG:
		if t := p.thread(n); t != nil {
			t.FPRegs = p.copyRegset(n)
		}
	case n.name == "LINUX" && n.typ == NT_X86_XSTATE && c.Machine == elf.EM_X86_64:
		if t := p.thread(n); t != nil {
			t.XState = p.copyRegset(n)
		}
	case n.name == "CORE" || n.name == "LINUX":
		if t := p.thread(n); t != nil {
			if d := p.copyRegset(n); d != nil {
				t.Notes = append(t.Notes, Note{Name: n.name, Type: n.typ, Desc: d})
			}
		}
	}
	return true
}

// thread returns the thread a per-thread note belongs to, or nil.
func (p *noteParser) thread(n rawNote) *Thread {
	if p.cur < 0 {
		if !p.dropped && !p.orphan {
			p.orphan = true
			p.core.problem(n.off, "note %s type %#x comes before any NT_PRSTATUS", n.name, n.typ)
		}
		return nil
	}
	return &p.core.Threads[p.cur]
}

// copyRegset copies a register-set descriptor, capped at maxRegsetBytes
// and at what is left of the core's copy budget (nil once it is spent).
func (p *noteParser) copyRegset(n rawNote) []byte {
	c := p.core
	d := n.desc
	if len(d) > maxRegsetBytes {
		c.problem(n.off, "note %s type %#x of %d bytes truncated to %d", n.name, n.typ, len(d), maxRegsetBytes)
		d = d[:maxRegsetBytes]
	}
	if len(d) > p.copyBudget {
		if !p.overCopy {
			p.overCopy = true
			c.problem(n.off, "register-set notes exceed %d bytes in all; this and later ones are ignored", maxNoteCopy)
		}
		return nil
	}
	p.copyBudget -= len(d)
	return append([]byte(nil), d...)
}
