package elfcore

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Synthetic cores built byte by byte, with the layouts documented in
// prstatus.go (checked against offsetof/sizeof from <sys/procfs.h>), for the
// malformed-input cases a kernel never writes.

var le = binary.LittleEndian

type synthNote struct {
	name string
	typ  uint32
	desc []byte
}

type synthLoad struct {
	vaddr, memsz uint64
	data         []byte // dumped bytes (p_filesz = len(data))
}

// encodeNotes lays out notes as the kernel does: 12-byte header, name and
// descriptor each padded to 4 bytes.
func encodeNotes(notes []synthNote) []byte {
	var b []byte
	for _, n := range notes {
		name := append([]byte(n.name), 0)
		b = le.AppendUint32(b, uint32(len(name)))
		b = le.AppendUint32(b, uint32(len(n.desc)))
		b = le.AppendUint32(b, n.typ)
		b = append(b, name...)
		b = append(b, make([]byte, alignUp(uint64(len(name)), 4)-uint64(len(name)))...)
		b = append(b, n.desc...)
		b = append(b, make([]byte, alignUp(uint64(len(n.desc)), 4)-uint64(len(n.desc)))...)
	}
	return b
}

// buildCore returns an ELF64 little-endian ET_CORE file with one PT_NOTE
// segment per entry of noteSegs followed by one PT_LOAD per load. Program
// header i is at offset 64+56*i.
func buildCore(machine elf.Machine, noteSegs [][]synthNote, loads []synthLoad) []byte {
	var raw [][]byte
	for _, ns := range noteSegs {
		raw = append(raw, encodeNotes(ns))
	}
	return buildCoreRaw(machine, raw, loads)
}

// buildCoreRaw is buildCore with the note segments given as bytes.
func buildCoreRaw(machine elf.Machine, noteSegs [][]byte, loads []synthLoad) []byte {
	nph := len(noteSegs) + len(loads)
	b := make([]byte, ehdr64Size+nph*phdr64Size)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	b[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	b[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	le.PutUint16(b[16:], uint16(elf.ET_CORE))
	le.PutUint16(b[18:], uint16(machine))
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[32:], ehdr64Size) // e_phoff
	le.PutUint16(b[52:], ehdr64Size)
	le.PutUint16(b[54:], phdr64Size)
	le.PutUint16(b[56:], uint16(nph))
	ph := func(i int, typ elf.ProgType, flags elf.ProgFlag, off, vaddr, filesz, memsz, align uint64) {
		p := b[ehdr64Size+i*phdr64Size:]
		le.PutUint32(p, uint32(typ))
		le.PutUint32(p[4:], uint32(flags))
		le.PutUint64(p[8:], off)
		le.PutUint64(p[16:], vaddr)
		le.PutUint64(p[32:], filesz)
		le.PutUint64(p[40:], memsz)
		le.PutUint64(p[48:], align)
	}
	var body []byte
	off := uint64(len(b))
	for i, data := range noteSegs {
		ph(i, elf.PT_NOTE, 0, off+uint64(len(body)), 0, uint64(len(data)), 0, 4)
		body = append(body, data...)
	}
	for i, l := range loads {
		ph(len(noteSegs)+i, elf.PT_LOAD, elf.PF_R|elf.PF_W, off+uint64(len(body)), l.vaddr, uint64(len(l.data)), l.memsz, 0x1000)
		body = append(body, l.data...)
	}
	return append(b, body...)
}

// setPhdr64 overwrites a 64-bit field of program header i (8: p_offset,
// 16: p_vaddr, 32: p_filesz, 40: p_memsz).
func setPhdr64(core []byte, i, field int, v uint64) {
	le.PutUint64(core[ehdr64Size+i*phdr64Size+field:], v)
}

func prstatusDesc(nregs int, lwp int32, cursig int16, regs ...uint64) []byte {
	d := make([]byte, prstatusRegOff+nregs*8+8)
	le.PutUint32(d[0:], uint32(cursig))
	le.PutUint16(d[12:], uint16(cursig))
	le.PutUint64(d[24:], 0x4000) // pr_sighold
	le.PutUint32(d[32:], uint32(lwp))
	le.PutUint32(d[36:], 1)   // ppid
	le.PutUint32(d[40:], 100) // pgrp
	le.PutUint32(d[44:], 100) // sid
	for i, r := range regs {
		le.PutUint64(d[prstatusRegOff+i*8:], r)
	}
	return d
}

func prpsinfoDesc(pid int32, fname, args string) []byte {
	d := make([]byte, prpsinfoSize)
	d[1] = 'R'
	le.PutUint32(d[16:], 1000)
	le.PutUint32(d[20:], 1001)
	le.PutUint32(d[24:], uint32(pid))
	copy(d[40:56], fname)
	copy(d[56:], args)
	return d
}

func siginfoDesc(signo, code int32, word uint64) []byte {
	d := make([]byte, 128)
	le.PutUint32(d[0:], uint32(signo))
	le.PutUint32(d[8:], uint32(code))
	le.PutUint64(d[16:], word)
	return d
}

func fileNoteDesc(pageSize uint64, files ...MappedFile) []byte {
	var d []byte
	d = le.AppendUint64(d, uint64(len(files)))
	d = le.AppendUint64(d, pageSize)
	for _, f := range files {
		d = le.AppendUint64(d, f.Start)
		d = le.AppendUint64(d, f.End)
		d = le.AppendUint64(d, f.FileOffset/pageSize)
	}
	for _, f := range files {
		d = append(append(d, f.Path...), 0)
	}
	return d
}

func auxvDesc(pairs ...uint64) []byte {
	var d []byte
	for _, v := range append(pairs, 0, 0) {
		d = le.AppendUint64(d, v)
	}
	return d
}

// x86Regs returns 27 registers with rip and rsp set.
func x86Regs(rip, rsp uint64) []uint64 {
	r := make([]uint64, nRegsX86_64)
	r[16], r[19] = rip, rsp
	return r
}

// goodNotes is a well-formed note set: two threads, the first one crashed.
func goodNotes() []synthNote {
	return []synthNote{
		{"CORE", NT_PRSTATUS, prstatusDesc(nRegsX86_64, 42, 11, x86Regs(0x401000, 0x7ff0)...)},
		{"CORE", NT_PRPSINFO, prpsinfoDesc(41, "prog", "./prog a b ")},
		{"CORE", NT_SIGINFO, siginfoDesc(11, 1, 0x10)},
		{"CORE", NT_AUXV, auxvDesc(AT_PAGESZ, 4096, AT_EXECFN, 0x2000)},
		{"CORE", NT_FILE, fileNoteDesc(4096,
			MappedFile{Start: 0x5000, End: 0x6000, FileOffset: 0x1000, Path: "/lib/b.so"},
			MappedFile{Start: 0x1000, End: 0x3000, FileOffset: 0, Path: "/bin/prog"})},
		{"CORE", NT_PRFPREG, make([]byte, 512)},
		{"LINUX", NT_X86_XSTATE, make([]byte, 1088)},
		{"CORE", NT_PRSTATUS, prstatusDesc(nRegsX86_64, 41, 0, x86Regs(0x402000, 0x8ff0)...)},
		{"LINUX", 0x205, []byte{1, 2, 3, 4}},
	}
}

func goodLoads() []synthLoad {
	mem := make([]byte, 0x1000)
	copy(mem, "./prog\x00")
	le.PutUint64(mem[0x100:], 0x1122334455667788)
	return []synthLoad{
		{vaddr: 0x2000, memsz: 0x1000, data: mem},
		{vaddr: 0x3000, memsz: 0x1000, data: make([]byte, 0x800)}, // half dumped
	}
}

func mustParse(t *testing.T, b []byte) *Core {
	t.Helper()
	c, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func TestSyntheticDecode(t *testing.T) {
	c := mustParse(t, buildCore(elf.EM_X86_64, [][]synthNote{goodNotes()}, goodLoads()))
	if len(c.Problems) != 0 {
		t.Errorf("Problems: %v", c.Problems)
	}
	if len(c.Threads) != 2 || c.Threads[0].LWP != 42 || c.Threads[1].LWP != 41 {
		t.Fatalf("Threads: %+v", c.Threads)
	}
	t0 := c.Threads[0]
	if t0.Signal != 11 || t0.SigHeld != 0x4000 || t0.PPID != 1 || t0.PGRP != 100 || t0.SID != 100 {
		t.Errorf("thread 0: %+v", t0)
	}
	if r, ok := t0.X86_64(); !ok || r.Rip != 0x401000 || r.Rsp != 0x7ff0 {
		t.Errorf("X86_64() = %+v, %v", r, ok)
	}
	if _, ok := t0.AArch64(); ok {
		t.Errorf("AArch64() ok on an x86-64 core")
	}
	if len(t0.FPRegs) != 512 || len(t0.XState) != 1088 || t0.SigInfo != c.Signal {
		t.Errorf("thread 0 regsets: fp %d xstate %d siginfo %v", len(t0.FPRegs), len(t0.XState), t0.SigInfo)
	}
	t1 := c.Threads[1]
	if t1.PC() != 0x402000 || t1.SP() != 0x8ff0 || t1.SigInfo != nil || len(t1.Notes) != 1 || t1.Notes[0].Type != 0x205 {
		t.Errorf("thread 1: %+v", t1)
	}
	if s := c.Signal; s == nil || s.Signo != 11 || s.Code != 1 || s.Addr != 0x10 {
		t.Errorf("Signal: %+v", s)
	}
	if p := c.Process; p == nil || p.PID != 41 || p.UID != 1000 || p.GID != 1001 || p.State != 'R' || p.Fname != "prog" || p.Args != "./prog a b" {
		t.Errorf("Process: %+v", p)
	}
	if len(c.Files) != 2 || c.Files[0].Path != "/bin/prog" || c.Files[1].FileOffset != 0x1000 || c.Files[1].Path != "/lib/b.so" {
		t.Errorf("Files: %+v", c.Files)
	}
	if got := c.ExecFn(); got != "./prog" {
		t.Errorf("ExecFn = %q", got)
	}
	// Memory: the marker, a read running from dumped into undumped bytes,
	// and an address outside all segments.
	buf := make([]byte, 8)
	if n, err := c.ReadMemory(0x2100, buf); n != 8 || err != nil || le.Uint64(buf) != 0x1122334455667788 {
		t.Errorf("ReadMemory(0x2100) = %d, %v, %x", n, err, buf)
	}
	big := make([]byte, 0x1000)
	n, err := c.ReadMemory(0x2900, big)
	var me *MemoryError
	if n != 0x700+0x800 || !errors.As(err, &me) || me.Addr != 0x3800 || !me.NotDumped {
		t.Errorf("ReadMemory across into undumped = %#x, %v", n, err)
	}
	if n, err := c.ReadMemory(0x9000, buf); n != 0 || !errors.As(err, &me) || me.NotDumped {
		t.Errorf("ReadMemory(unmapped) = %d, %v", n, err)
	}
	if n, err := c.ReadMemory(^uint64(0)-3, buf); n != 0 || err == nil {
		t.Errorf("ReadMemory(top of address space) = %d, %v", n, err)
	}
}

func TestSyntheticAArch64(t *testing.T) {
	regs := make([]uint64, nRegsAArch64)
	for i := range regs {
		regs[i] = uint64(i)
	}
	regs[31], regs[32] = 0xfff0, 0x400100
	notes := []synthNote{
		{"CORE", NT_PRSTATUS, prstatusDesc(nRegsAArch64, 7, 6, regs...)},
		{"LINUX", NT_ARM_PAC_MASK, make([]byte, 16)},
		{"LINUX", NT_X86_XSTATE, make([]byte, 16)}, // 0x202 means nothing on aarch64
	}
	c := mustParse(t, buildCore(elf.EM_AARCH64, [][]synthNote{notes}, nil))
	if len(c.Threads) != 1 {
		t.Fatalf("threads: %d", len(c.Threads))
	}
	th := c.Threads[0]
	a, ok := th.AArch64()
	if !ok || a.X[29] != 29 || a.X[30] != 30 || a.Sp != 0xfff0 || a.Pc != 0x400100 || a.Pstate != 33 {
		t.Errorf("AArch64() = %+v, %v", a, ok)
	}
	if th.PC() != 0x400100 || th.SP() != 0xfff0 || th.XState != nil || len(th.Notes) != 2 {
		t.Errorf("thread: %+v", th)
	}
	if _, ok := th.X86_64(); ok {
		t.Errorf("X86_64() ok on aarch64")
	}
}

func TestSyntheticKillSiginfo(t *testing.T) {
	// si_code SI_TKILL (-6): si_pid and si_uid instead of si_addr.
	notes := []synthNote{
		{"CORE", NT_PRSTATUS, prstatusDesc(nRegsX86_64, 5, 6, x86Regs(1, 2)...)},
		{"CORE", NT_SIGINFO, siginfoDesc(6, -6, 1000<<32|1234)},
	}
	c := mustParse(t, buildCore(elf.EM_X86_64, [][]synthNote{notes}, nil))
	if s := c.Signal; s == nil || !s.FromUser() || s.Pid != 1234 || s.Uid != 1000 || s.Addr != 0 {
		t.Errorf("Signal: %+v", s)
	}
}

func TestSyntheticSeveralNoteSegments(t *testing.T) {
	n := goodNotes()
	c := mustParse(t, buildCore(elf.EM_X86_64, [][]synthNote{n[:7], n[7:]}, nil))
	if len(c.Threads) != 2 || c.Threads[1].LWP != 41 || len(c.Threads[1].Notes) != 1 || len(c.Problems) != 0 {
		t.Errorf("threads %+v problems %v", c.Threads, c.Problems)
	}
}

func hasProblem(c *Core, substr string) bool {
	for _, p := range c.Problems {
		if strings.Contains(p.Msg, substr) {
			return true
		}
	}
	return false
}

func TestSyntheticMalformed(t *testing.T) {
	good := buildCore(elf.EM_X86_64, [][]synthNote{goodNotes()}, goodLoads())
	noteOff := le.Uint64(good[ehdr64Size+8:])
	noteSize := le.Uint64(good[ehdr64Size+32:])
	prstatusSize := uint64(12 + 8 + len(prstatusDesc(nRegsX86_64, 0, 0)))

	t.Run("truncated note area", func(t *testing.T) {
		b := good[:noteOff+prstatusSize+30] // first note whole, the second cut
		c := mustParse(t, b)
		if len(c.Threads) != 1 || c.Threads[0].LWP != 42 || !hasProblem(c, "extends past") {
			t.Errorf("threads %d problems %v", len(c.Threads), c.Problems)
		}
		if !hasProblem(c, "truncated") { // the PT_NOTE and PT_LOADs run past the end
			t.Errorf("problems %v", c.Problems)
		}
	})
	t.Run("huge descsz", func(t *testing.T) {
		b := append([]byte(nil), good...)
		le.PutUint32(b[noteOff+prstatusSize+4:], 0xfffffff0) // NT_PRPSINFO descsz
		c := mustParse(t, b)
		if len(c.Threads) != 1 || c.Process != nil || !hasProblem(c, "descriptor size 4294967280") {
			t.Errorf("threads %d problems %v", len(c.Threads), c.Problems)
		}
	})
	t.Run("short prstatus", func(t *testing.T) {
		notes := []synthNote{{"CORE", NT_PRSTATUS, prstatusDesc(nRegsX86_64, 9, 0)[:100]}}
		c := mustParse(t, buildCore(elf.EM_X86_64, [][]synthNote{notes}, nil))
		if len(c.Threads) != 1 || c.Threads[0].Regs != nil || c.Threads[0].LWP != 9 || !hasProblem(c, "too short") {
			t.Errorf("threads %+v problems %v", c.Threads, c.Problems)
		}
	})
	t.Run("tiny prstatus", func(t *testing.T) {
		var notes []synthNote
		for i := 0; i < 2*maxProblems; i++ {
			notes = append(notes, synthNote{"CORE", NT_PRSTATUS, make([]byte, 20)})
		}
		c := mustParse(t, buildCore(elf.EM_X86_64, [][]synthNote{notes}, nil))
		if len(c.Threads) != 0 || len(c.Problems) != maxProblems+1 || !hasProblem(c, "too short to identify") || !hasProblem(c, "the rest are not listed") {
			t.Errorf("threads %d problems %d", len(c.Threads), len(c.Problems))
		}
	})
	t.Run("NT_FILE count too large", func(t *testing.T) {
		d := fileNoteDesc(4096, MappedFile{Start: 1, End: 2, Path: "/x"})
		le.PutUint64(d, 1<<60)
		notes := []synthNote{{"CORE", NT_FILE, d}}
		c := mustParse(t, buildCore(elf.EM_X86_64, [][]synthNote{notes}, nil))
		if len(c.Files) != 1 || c.Files[0].Path != "/x" || !hasProblem(c, "claims") {
			t.Errorf("files %+v problems %v", c.Files, c.Problems)
		}
	})
	t.Run("regset before prstatus", func(t *testing.T) {
		notes := []synthNote{{"CORE", NT_PRFPREG, make([]byte, 512)}}
		c := mustParse(t, buildCore(elf.EM_X86_64, [][]synthNote{notes}, nil))
		if !hasProblem(c, "before any NT_PRSTATUS") || !hasProblem(c, "no NT_PRSTATUS") {
			t.Errorf("problems %v", c.Problems)
		}
	})
	t.Run("overlapping segments", func(t *testing.T) {
		b := append([]byte(nil), good...)
		setPhdr64(b, 2, 16, 0x2800) // second PT_LOAD now starts inside the first
		c := mustParse(t, b)
		if !hasProblem(c, "overlaps") {
			t.Errorf("problems %v", c.Problems)
		}
		buf := make([]byte, 8)
		if n, err := c.ReadMemory(0x2100, buf); n != 8 || err != nil || le.Uint64(buf) != 0x1122334455667788 {
			t.Errorf("ReadMemory = %d, %v", n, err)
		}
	})
	t.Run("segment beyond end of file", func(t *testing.T) {
		b := append([]byte(nil), good...)
		setPhdr64(b, 2, 32, 1<<40) // p_filesz
		setPhdr64(b, 2, 40, 1<<40) // p_memsz
		setPhdr64(b, 1, 8, 1<<62)  // first PT_LOAD's p_offset
		c := mustParse(t, b)
		// One headline problem for both segments, at the end of the file.
		if len(c.Problems) != 1 || !hasProblem(c, "the core is truncated") || !hasProblem(c, "2 of 2 memory segments") ||
			c.Problems[0].Off != int64(len(b)) || c.Truncated == nil || c.Truncated.Segments != 2 {
			t.Errorf("problems %v", c.Problems)
		}
		buf := make([]byte, 8)
		var me *MemoryError
		if n, err := c.ReadMemory(0x2100, buf); n != 0 || !errors.As(err, &me) || !me.NotDumped {
			t.Errorf("ReadMemory(clamped away) = %d, %v", n, err)
		}
		if n, err := c.ReadMemory(0x3000+0x7f8, buf); n != 8 || err != nil {
			t.Errorf("ReadMemory(clamped segment) = %d, %v", n, err)
		}
		if n, _ := c.ReadMemory(0x3000+0x7fc, buf); n != 4 {
			t.Errorf("ReadMemory(end of clamped segment) = %d", n)
		}
	})
	t.Run("segment wrapping the address space", func(t *testing.T) {
		b := append([]byte(nil), good...)
		setPhdr64(b, 2, 16, ^uint64(0)-0x10)
		c := mustParse(t, b)
		if !hasProblem(c, "wraps") {
			t.Errorf("problems %v", c.Problems)
		}
		buf := make([]byte, 64)
		if n, err := c.ReadMemory(^uint64(0)-0x10, buf); n != 0x10 || err == nil {
			t.Errorf("ReadMemory = %d, %v", n, err)
		}
	})
	t.Run("phnum beyond file", func(t *testing.T) {
		b := append([]byte(nil), good...)
		le.PutUint16(b[56:], 0xfff0)
		c := mustParse(t, b)
		if !hasProblem(c, "program header table") {
			t.Errorf("problems %v", c.Problems)
		}
	})
	t.Run("no PT_NOTE", func(t *testing.T) {
		c := mustParse(t, buildCore(elf.EM_X86_64, nil, goodLoads()))
		if len(c.Segments) != 2 || len(c.Threads) != 0 || !hasProblem(c, "no PT_NOTE") {
			t.Errorf("segments %d problems %v", len(c.Segments), c.Problems)
		}
	})
	t.Run("trailing zero padding", func(t *testing.T) {
		b := buildCore(elf.EM_X86_64, [][]synthNote{goodNotes()}, nil)
		b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
		setPhdr64(b, 0, 32, noteSize+8)
		c := mustParse(t, b)
		if len(c.Problems) != 0 {
			t.Errorf("problems %v", c.Problems)
		}
	})
}

func TestFormatErrors(t *testing.T) {
	good := buildCore(elf.EM_X86_64, [][]synthNote{goodNotes()}, nil)
	notCore := append([]byte(nil), good...)
	le.PutUint16(notCore[16:], uint16(elf.ET_DYN))
	class32 := append([]byte(nil), good...)
	class32[elf.EI_CLASS] = byte(elf.ELFCLASS32)
	classBad := append([]byte(nil), good...)
	classBad[elf.EI_CLASS] = 3
	random := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(random)
	cases := map[string]struct {
		data []byte
		msg  string
	}{
		"wrong machine": {buildCore(elf.EM_386, nil, nil), "unsupported machine EM_386"},
		"not a core":    {notCore, "not a core file (type ET_DYN)"},
		"x32":           {class32, "a 32-bit x32 (the x86-64 ILP32 ABI) core"},
		"bad class":     {classBad, "unsupported ELF class"},
		"random bytes":  {random, "not an ELF file"},
		"empty":         {nil, "too small"},
		"short header":  {good[:40], "too small"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := Parse(tc.data)
			var fe *FormatError
			if c != nil || !errors.As(err, &fe) || !strings.Contains(fe.Msg, tc.msg) {
				t.Errorf("Parse = %v, %v; want a FormatError containing %q", c, err, tc.msg)
			}
			// And through Open, from a file.
			path := filepath.Join(t.TempDir(), "core")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Open(path); !errors.As(err, &fe) {
				t.Errorf("Open = %v, want a FormatError", err)
			}
		})
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v", err)
	}
	// A corrupt gzip stream is an error, and leaves no temporary file.
	path := filepath.Join(t.TempDir(), "core.gz")
	os.WriteFile(path, []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3}, 0o600)
	if _, err := Open(path); err == nil {
		t.Errorf("Open(corrupt gzip) succeeded")
	}
}
