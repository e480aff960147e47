package unwind

// A minimal ELF core reader for the tests: thread registers from
// NT_PRSTATUS, memory from PT_LOAD segments and the files NT_FILE maps, and
// a module finder over those files. The real reader is analysis/elfcore.

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"testing"
)

type coreThread struct {
	lwp  int
	regs Regs
}

type coreMapping struct {
	start, end, off uint64
	path            string
}

type testCore struct {
	loads    []elf.ProgHeader
	coreData []byte
	maps     []coreMapping
	files    map[string][]byte
	threads  []coreThread
	modules  []*Module
}

func openTestCore(t *testing.T, path string) *testCore {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("open core: %v", err)
	}
	defer f.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCore{coreData: data, files: map[string][]byte{}}
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			c.loads = append(c.loads, p.ProgHeader)
		case elf.PT_NOTE:
			notes := make([]byte, p.Filesz)
			if _, err := p.ReadAt(notes, 0); err != nil {
				t.Fatal(err)
			}
			c.parseNotes(t, notes)
		}
	}
	c.loadModules(t)
	return c
}

// parseNotes reads Elf64_Nhdr records (namesz, descsz, type; name and desc
// padded to 4 bytes).
func (c *testCore) parseNotes(t *testing.T, b []byte) {
	le := binary.LittleEndian
	for len(b) >= 12 {
		namesz, descsz, typ := le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:])
		b = b[12:]
		nameEnd := (int(namesz) + 3) &^ 3
		descEnd := nameEnd + (int(descsz)+3)&^3
		if descEnd > len(b) {
			t.Fatalf("truncated note")
		}
		desc := b[nameEnd : nameEnd+int(descsz)]
		switch elf.NType(typ) {
		case elf.NT_PRSTATUS:
			// struct elf_prstatus: pr_pid at 32, pr_reg (user_regs_struct) at 112.
			w := func(i int) uint64 { return le.Uint64(desc[112+8*i:]) }
			names := []string{"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
				"rax", "rcx", "rdx", "rsi", "rdi", "", "rip", "", "", "rsp"}
			m := map[string]uint64{}
			for i, n := range names {
				if n != "" {
					m[n] = w(i)
				}
			}
			c.threads = append(c.threads, coreThread{lwp: int(le.Uint32(desc[32:])), regs: AMD64.RegsFromNamed(m)})
		case 0x46494c45: // NT_FILE
			count, page := le.Uint64(desc), le.Uint64(desc[8:])
			ents := desc[16:]
			names := bytes.Split(ents[count*24:], []byte{0})
			for i := uint64(0); i < count; i++ {
				e := ents[i*24:]
				c.maps = append(c.maps, coreMapping{start: le.Uint64(e), end: le.Uint64(e[8:]),
					off: le.Uint64(e[16:]) * page, path: string(names[i])})
			}
		}
		b = b[descEnd:]
	}
}

// loadModules opens every mapped file and builds a Module for each ELF one.
func (c *testCore) loadModules(t *testing.T) {
	byPath := map[string][]coreMapping{}
	var order []string
	for _, m := range c.maps {
		if _, ok := byPath[m.path]; !ok {
			order = append(order, m.path)
		}
		byPath[m.path] = append(byPath[m.path], m)
	}
	for _, path := range order {
		ms := byPath[path]
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		c.files[path] = data
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			continue
		}
		mod := &Module{Name: path, Lo: ms[0].start, Hi: ms[0].end}
		first := ms[0]
		for _, m := range ms {
			mod.Lo, mod.Hi = min(mod.Lo, m.start), max(mod.Hi, m.end)
			if m.off < first.off {
				first = m
			}
		}
		for _, p := range ef.Progs {
			if p.Type == elf.PT_LOAD && first.off >= p.Off && first.off < p.Off+p.Filesz {
				mod.Bias = first.start - (p.Vaddr - p.Off + first.off)
				break
			}
		}
		sect := func(name string) Section {
			s := ef.Section(name)
			if s == nil {
				return Section{}
			}
			d, err := s.Data()
			if err != nil {
				return Section{}
			}
			return Section{Data: d, Addr: s.Addr}
		}
		mod.EHFrame, mod.EHFrameHdr, mod.DebugFrame = sect(".eh_frame"), sect(".eh_frame_hdr"), sect(".debug_frame")
		c.modules = append(c.modules, mod)
		ef.Close()
	}
	sort.Slice(c.modules, func(i, j int) bool { return c.modules[i].Lo < c.modules[j].Lo })
}

func (c *testCore) ModuleAt(pc uint64) *Module {
	for _, m := range c.modules {
		if pc >= m.Lo && pc < m.Hi {
			return m
		}
	}
	return nil
}

// ReadMemory reads from the core's PT_LOAD contents, then from mapped files.
func (c *testCore) ReadMemory(addr uint64, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := c.readSome(addr+uint64(n), p[n:])
		if k == 0 {
			return n, fmt.Errorf("cannot read memory at 0x%x", addr+uint64(n))
		}
		n += k
	}
	return n, nil
}

func (c *testCore) readSome(addr uint64, p []byte) int {
	for _, l := range c.loads {
		if addr >= l.Vaddr && addr < l.Vaddr+l.Filesz {
			off := l.Off + (addr - l.Vaddr)
			end := min(l.Off+l.Filesz, uint64(len(c.coreData)))
			if off >= end {
				return 0
			}
			return copy(p, c.coreData[off:end][:min(uint64(len(p)), end-off)])
		}
	}
	for _, m := range c.maps {
		if addr >= m.start && addr < m.end {
			data := c.files[m.path]
			off := m.off + (addr - m.start)
			if off >= uint64(len(data)) {
				return 0
			}
			k := min(uint64(len(p)), m.end-addr, uint64(len(data))-off)
			return copy(p, data[off:off+k])
		}
	}
	return 0
}
