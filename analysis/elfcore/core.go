package elfcore

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"runtime/debug"
	"sort"

	"github.com/faultline-dev/faultline/analysis/input"
)

// Caps on counts and sizes taken from file data. Each is also bounded by the
// size of the bytes that hold the items, so none can cause an allocation
// larger than the core itself.
const (
	maxThreads      = 1 << 16 // NT_PRSTATUS notes (threads) per core
	maxNotes        = 1 << 22 // notes walked across all PT_NOTE segments
	maxNoteCopy     = 1 << 27 // bytes copied out of notes per core (register sets)
	maxSegments     = 1 << 22 // program headers
	maxFiles        = 1 << 22 // NT_FILE entries
	maxFileStrings  = 1 << 28 // bytes of NT_FILE path strings
	maxRegsetBytes  = 1 << 20 // one copied register-set note (XSAVE area, SVE, ...)
	maxAuxv         = 1 << 12 // NT_AUXV entries
	maxExecFnLength = 4096    // PATH_MAX
)

// Core is an opened Linux ELF core dump.
type Core struct {
	Path    string      // the path given to Open ("" for Parse)
	Machine elf.Machine // elf.EM_X86_64, elf.EM_AARCH64 or elf.EM_386
	// Class is the core's ELF class: ELFCLASS32 for an i386 process,
	// whose longs and pointers in the notes are 4 bytes.
	Class elf.Class
	// ByteOrder is the core's byte order (EI_DATA).
	ByteOrder binary.ByteOrder
	// Threads in NT_PRSTATUS order: the kernel writes the thread that took
	// the fatal signal first (linux/fs/binfmt_elf.c fill_note_info).
	Threads  []Thread
	Process  *ProcessInfo // NT_PRPSINFO; nil if absent
	Signal   *SigInfo     // the first NT_SIGINFO; nil if absent
	Auxv     []AuxEntry   // NT_AUXV, without the terminating AT_NULL
	Files    []MappedFile // NT_FILE, sorted by Start
	Segments []Segment    // PT_LOAD, sorted by Vaddr
	Problems []Problem    // non-fatal issues, in the order they were found
	// Truncated is set when the file ends before the data its program
	// headers place in it (RLIMIT_CORE, a full disk, a cut-short copy).
	Truncated *Truncation

	lay     *layout  // the class's header and note layouts
	data    []byte   // the whole core file (memory-mapped, or given to Parse)
	maxEnd  []uint64 // maxEnd[i] = max(Segments[0..i].end()), for lookups with overlaps
	pager   *pager   // reads memory from the file; nil for Parse
	release func() error
}

// Segment is one PT_LOAD program header: process memory [Vaddr, Vaddr+Memsz)
// whose first Filesz bytes are stored at file offset Offset. Filesz is
// clamped to what the file actually holds.
type Segment struct {
	Vaddr, Memsz, Offset, Filesz uint64
	Flags                        elf.ProgFlag
}

// End returns the first address past the segment.
func (s *Segment) End() uint64 { return s.Vaddr + s.Memsz }

// Open opens the core dump at path (gzip, zstd, xz or lz4 compressed
// cores through package input, which decompresses them into an unlinked
// temporary file; a stream that breaks off is read as a truncated core).
func Open(path string) (*Core, error) {
	in, err := input.Open(path)
	if err != nil {
		return nil, err
	}
	c, err := OpenFile(in.File, path)
	if err != nil {
		in.Close()
		return nil, err
	}
	if in.Damaged != "" {
		c.problem(0, "%s", in.Damaged)
	}
	unmap := c.release
	c.release = func() error {
		err := unmap()
		if cerr := in.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return c, nil
}

// OpenFile reads the plain (not compressed) core dump in f, named name in
// messages. The file is memory-mapped read-only; f may be closed once
// OpenFile returns.
func OpenFile(f *os.File, name string) (*Core, error) {
	data, pg, unmap, err := mapFile(f)
	if err != nil {
		return nil, fmt.Errorf("elfcore: mapping %s: %w", name, err)
	}
	c, err := parse(data, pg)
	if err != nil {
		unmap()
		return nil, err
	}
	c.Path = name
	c.release = unmap
	return c, nil
}

// Close releases the mapping and removes any temporary decompressed file.
// Slices obtained from the Core must not be used after Close.
func (c *Core) Close() error {
	if c.release == nil {
		return nil
	}
	err := c.release()
	c.release = nil
	c.data = nil
	return err
}

// Parse reads a core dump already in memory. The Core refers to data; the
// caller must keep it unchanged while the Core is in use.
func Parse(data []byte) (c *Core, err error) {
	return parse(data, nil)
}

// parse reads the core in data; memory reads go through pg when it is
// not nil (a core opened from a file), else to data.
func parse(data []byte, pg *pager) (c *Core, err error) {
	defer guardFault(debug.SetPanicOnFault(true), &err)
	c = &Core{data: data, pager: pg}
	if err := c.parseHeader(); err != nil {
		return nil, err
	}
	return c, nil
}

// maxProblems caps Problems: a corrupt core can have a problem per note.
const maxProblems = 1000

func (c *Core) problem(off int64, format string, args ...any) {
	c.addProblem(Problem{Off: off, Msg: fmt.Sprintf(format, args...)})
}

func (c *Core) addProblem(p Problem) {
	switch {
	case len(c.Problems) < maxProblems:
		c.Problems = append(c.Problems, p)
	case len(c.Problems) == maxProblems:
		c.Problems = append(c.Problems, Problem{Off: p.Off, Msg: fmt.Sprintf("more than %d problems; the rest are not listed", maxProblems)})
	}
}

// pnXnum is e_phnum's escape: the real count is in section header 0's
// sh_info (gABI "Extended numbering").
const pnXnum = 0xffff

// parseHeader decodes the ELF header, the program headers and the notes.
func (c *Core) parseHeader() error {
	if err := c.readIdent(); err != nil {
		return err
	}
	d, l := c.data, c.lay
	if len(d) < l.ehdrSize {
		return &FormatError{Format: "elfcore", Off: 0, Msg: fmt.Sprintf("file of %d bytes is too small for an ELF header", len(d))}
	}
	h := newCursor(d[:l.ehdrSize], c.ByteOrder, 0)
	h.Seek(16)
	typ := elf.Type(h.U16())
	c.Machine = elf.Machine(h.U16())
	h.Seek(l.ePhoff)
	phoff := h.Uint(l.word)
	shoff := h.Uint(l.word)
	h.Seek(l.ePhentsize)
	phentsize := uint64(h.U16())
	phnum := uint64(h.U16())
	if typ != elf.ET_CORE {
		return &FormatError{Format: "elfcore", Off: 16, Msg: fmt.Sprintf("not a core file (type %v)", typ)}
	}
	if !supported(c.Machine, c.Class) {
		return &FormatError{Format: "elfcore", Off: 18, Msg: fmt.Sprintf("unsupported machine %v: %s", c.Machine, archOf(d))}
	}
	phnum, ok := c.programHeaderCount(phoff, shoff, phentsize, phnum)
	if !ok {
		return nil
	}
	notes := c.readProgramHeaders(phoff, phentsize, phnum)
	c.indexSegments()
	if len(notes) == 0 {
		c.problem(int64(phoff), "core has no PT_NOTE segment: no threads, registers or mappings")
	}
	c.parseNotes(notes, phoff)
	c.reportMissingMemory()
	return nil
}

// supported reports whether cores of machine m and class are read: x86-64
// and aarch64 (64-bit), i386 (32-bit). x32 (x86-64 with 32-bit pointers)
// is not.
func supported(m elf.Machine, class elf.Class) bool {
	switch m {
	case elf.EM_X86_64, elf.EM_AARCH64:
		return class == elf.ELFCLASS64
	case elf.EM_386:
		return class == elf.ELFCLASS32
	}
	return false
}

// readIdent checks e_ident: the magic, the class (32 or 64 bits) and the
// byte order, which it sets.
func (c *Core) readIdent() error {
	d := c.data
	if len(d) < elf.EI_NIDENT {
		return &FormatError{Format: "elfcore", Off: 0, Msg: fmt.Sprintf("file of %d bytes is too small for an ELF header", len(d))}
	}
	if string(d[:4]) != elf.ELFMAG {
		return &FormatError{Format: "elfcore", Off: 0, Msg: "not an ELF file (bad magic)"}
	}
	c.Class = elf.Class(d[elf.EI_CLASS])
	if c.Class != elf.ELFCLASS64 && c.Class != elf.ELFCLASS32 {
		return &FormatError{Format: "elfcore", Off: elf.EI_CLASS, Msg: fmt.Sprintf("unsupported ELF class %v: %s", c.Class, archOf(d))}
	}
	c.lay = layoutOf(c.Class)
	switch elf.Data(d[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		c.ByteOrder = binary.LittleEndian
	case elf.ELFDATA2MSB:
		c.ByteOrder = binary.BigEndian
	default:
		return &FormatError{Format: "elfcore", Off: elf.EI_DATA, Msg: fmt.Sprintf("unknown ELF data encoding %d", d[elf.EI_DATA])}
	}
	return nil
}

// programHeaderCount is how many program headers to read: e_phnum (or
// section header 0's sh_info under PN_XNUM), cut to what the file holds
// and to maxSegments. ok is false when there are none to read; each cut is
// a problem.
func (c *Core) programHeaderCount(phoff, shoff, phentsize, phnum uint64) (n uint64, ok bool) {
	if phnum == pnXnum {
		// gABI "Extended numbering": sh_info of section header 0.
		if sh := c.fileBytes(shoff, uint64(c.lay.shdrSize)); sh != nil {
			phnum = uint64(c.ByteOrder.Uint32(sh[c.lay.shInfo:]))
		} else {
			c.problem(int64(shoff), "e_phnum is PN_XNUM but section header 0 is not in the file")
			phnum = 0
		}
	}
	if phnum == 0 {
		c.problem(int64(c.lay.ePhnum), "core has no program headers")
		return 0, false
	}
	if phentsize < uint64(c.lay.phdrSize) {
		c.problem(int64(c.lay.ePhentsize), "program header size %d is smaller than %d; ignoring program headers", phentsize, c.lay.phdrSize)
		return 0, false
	}
	avail := uint64(0)
	if phoff < uint64(len(c.data)) {
		avail = (uint64(len(c.data)) - phoff) / phentsize
	}
	if phnum > avail {
		c.problem(int64(phoff), "program header table has %d entries but the file holds %d", phnum, avail)
		phnum = avail
	}
	if phnum > maxSegments {
		c.problem(int64(phoff), "%d program headers exceed the limit of %d", phnum, maxSegments)
		phnum = maxSegments
	}
	return phnum, true
}

// readProgramHeaders reads phnum program headers: PT_LOAD segments go to
// c.Segments, PT_NOTE segments are returned.
func (c *Core) readProgramHeaders(phoff, phentsize, phnum uint64) (notes []Segment) {
	for i := uint64(0); i < phnum; i++ {
		off := phoff + i*phentsize
		p := newCursor(c.data[off:off+uint64(c.lay.phdrSize)], c.ByteOrder, int64(off))
		ptype, seg, _ := c.lay.readPhdr(p)
		switch ptype {
		case elf.PT_LOAD:
			c.Segments = append(c.Segments, c.clampSegment(seg, int64(off), true))
		case elf.PT_NOTE:
			notes = append(notes, c.clampSegment(seg, int64(off), false))
		}
	}
	return notes
}

// parseNotes reads the notes of every PT_NOTE segment, each note range
// once, within the notes' budgets.
func (c *Core) parseNotes(notes []Segment, phoff uint64) {
	np := noteParser{core: c, walkBudget: maxNotes, copyBudget: maxNoteCopy}
	seen := make(map[[2]uint64]bool, len(notes))
	for _, n := range notes {
		key := [2]uint64{n.Offset, n.Filesz}
		if seen[key] { // one note range named by many headers is read once
			np.repeated++
			continue
		}
		seen[key] = true
		np.parse(c.data[n.Offset:n.Offset+n.Filesz], int64(n.Offset))
	}
	np.finish(int64(phoff))
}

// clampSegment makes seg consistent with the file: Filesz is cut to Memsz
// (for PT_LOAD) and to the end of the file; Memsz is cut so that the segment
// does not wrap around the address space.
func (c *Core) clampSegment(seg Segment, phOff int64, load bool) Segment {
	size := uint64(len(c.data))
	if seg.Memsz > ^uint64(0)-seg.Vaddr {
		c.problem(phOff, "segment at %#x with size %#x wraps the address space", seg.Vaddr, seg.Memsz)
		seg.Memsz = ^uint64(0) - seg.Vaddr // End() stays representable: up to 2^64-1
	}
	if load && seg.Filesz > seg.Memsz {
		c.problem(phOff, "segment at %#x has p_filesz %#x > p_memsz %#x", seg.Vaddr, seg.Filesz, seg.Memsz)
		seg.Filesz = seg.Memsz
	}
	switch {
	case seg.Filesz == 0:
	case seg.Offset >= size:
		c.truncated(seg, load, 0)
		seg.Filesz = 0
	case seg.Filesz > size-seg.Offset:
		c.truncated(seg, load, size-seg.Offset)
		seg.Filesz = size - seg.Offset
	}
	if seg.Filesz == 0 {
		seg.Offset = 0
	}
	return seg
}

// indexSegments sorts the PT_LOAD segments, reports overlaps and builds the
// running maximum of segment ends used by segmentIndex.
func (c *Core) indexSegments() {
	sort.SliceStable(c.Segments, func(i, j int) bool { return c.Segments[i].Vaddr < c.Segments[j].Vaddr })
	c.maxEnd = make([]uint64, len(c.Segments))
	var end uint64
	for i := range c.Segments {
		s := &c.Segments[i]
		if i > 0 && s.Vaddr < end && s.Memsz > 0 {
			c.problem(int64(s.Offset), "segment at %#x overlaps an earlier segment ending at %#x", s.Vaddr, end)
		}
		end = max(end, s.End())
		c.maxEnd[i] = end
	}
}

// fileBytes returns data[off:off+n] or nil if it is not all in the file.
func (c *Core) fileBytes(off, n uint64) []byte {
	size := uint64(len(c.data))
	if off > size || n > size-off {
		return nil
	}
	return c.data[off : off+n]
}
