package native

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"path/filepath"
)

// Modules without NT_FILE. Some writers of cores leave the note out
// (qemu-user's guest cores, some container runtimes' dumpers) or truncate
// it; the dynamic linker's own list of loaded objects is still in the
// process memory. The executable's dynamic section holds DT_DEBUG, which
// the dynamic linker points at its struct r_debug, whose r_map heads the
// list of struct link_map, one per loaded object (glibc elf/link.h; the
// System V ABI's "Dynamic Section" for DT_DEBUG). gdb's solib-svr4 reads
// the same list.

// Layouts (glibc elf/link.h): struct r_debug { int r_version; struct
// link_map *r_map; ElfW(Addr) r_brk; int r_state; ElfW(Addr) r_ldbase; }
// and struct link_map { ElfW(Addr) l_addr; char *l_name; ElfW(Dyn) *l_ld;
// struct link_map *l_next, *l_prev; }: with 8-byte pointers (checked with
// offsetof on x86-64 and aarch64) r_map is at 8 and the link_map fields at
// 0, 8, 16, 24; with 4-byte ones (i386) r_map at 4 and the fields at 0, 4,
// 8, 12. A dynamic section entry (ElfW(Dyn)) is two words.
type linkMapLayout struct {
	word                           uint64
	rMap, lAddr, lName, lLd, lNext uint64
}

func linkMapLayoutOf(word int) linkMapLayout {
	w := uint64(word)
	return linkMapLayout{word: w, rMap: w, lAddr: 0, lName: w, lLd: 2 * w, lNext: 3 * w}
}

// size is the bytes of a link_map entry read: up to l_prev.
func (l linkMapLayout) size() uint64 { return 5 * l.word }

const (
	maxLinkMaps   = 4096 // loaded objects followed before giving up
	maxDynEntries = 4096 // dynamic section entries read
	maxSOName     = 4096 // PATH_MAX
	dtNull        = 0
	dtDebug       = 21
)

// loadModulesFromLinkMap builds the module list of a core without NT_FILE,
// with the same steps: the executable is located (exeWithoutNTFile) and
// attached at the address its entry point says, then every object on the
// dynamic linker's link_map list is discovered, located and attached in
// list order (walkLinkMap, addLinkMapModule).
func (p *Process) loadModulesFromLinkMap(entry uint64) {
	exe := p.exeWithoutNTFile()
	switch {
	case entry == 0 && exe != "":
		p.problem("", "the core has neither an NT_FILE note nor the auxiliary vector's entry point (AT_ENTRY): %s cannot be placed in memory, so no module is symbolized", exe)
		return
	case exe == "":
		p.problem("", "the core has no NT_FILE note and the executable is unknown: pass the crashed program with --exe to find its libraries through the dynamic linker's link_map")
		return
	}
	p.addExeWithoutNTFile(exe, entry)
	if p.exe == nil || p.exe.obj == nil {
		return
	}
	n, err := p.walkLinkMap(p.exe)
	if err != nil {
		p.problem("", "the core has no NT_FILE note, and the dynamic linker's link_map could not be read (%v): only the executable can be symbolized", err)
		return
	}
	p.problem("", "the core has no NT_FILE note: %d libraries were found through the dynamic linker's link_map (DT_DEBUG → r_debug)", n)
}

// walkLinkMap adds a module for every shared object on the link_map list
// found through exe's DT_DEBUG, and returns how many it added.
func (p *Process) walkLinkMap(exe *module) (int, error) {
	rdebug, err := p.dtDebug(exe)
	if err != nil {
		return 0, err
	}
	l := linkMapLayoutOf(p.wordSize())
	lm, err := p.readWord(rdebug + l.rMap)
	if err != nil {
		return 0, fmt.Errorf("r_debug at %#x: %w", rdebug, err)
	}
	seen := map[uint64]bool{}
	added := 0
	for ; lm != 0 && !seen[lm]; lm, err = p.readWord(lm + l.lNext) {
		if len(seen) >= maxLinkMaps {
			return added, fmt.Errorf("more than %d link_map entries", maxLinkMaps)
		}
		seen[lm] = true
		b := make([]byte, l.size())
		if n, _ := p.ReadMemory(lm, b); n < len(b) {
			return added, fmt.Errorf("link_map entry at %#x is not in the core", lm)
		}
		addr, nameAt, ld := p.word(b[l.lAddr:]), p.word(b[l.lName:]), p.word(b[l.lLd:])
		name := ""
		if nameAt != 0 {
			name = p.readCString(nameAt, maxSOName)
		}
		// The first entry is the executable (empty name); the vDSO has no
		// file ("linux-vdso.so.1") and comes from AT_SYSINFO_EHDR.
		if name == "" || !filepath.IsAbs(name) || p.moduleAt(ld) != nil {
			continue
		}
		p.addLinkMapModule(name, addr, ld)
		added++
	}
	if err != nil && len(seen) > 0 {
		return added, fmt.Errorf("link_map list: %w", err)
	}
	return added, nil
}

// dtDebug reads the executable's dynamic section in core memory (where the
// dynamic linker has filled in DT_DEBUG) and returns the r_debug address.
func (p *Process) dtDebug(exe *module) (uint64, error) {
	var dyn *elf.Prog
	for _, ph := range exe.obj.ELF().Progs {
		if ph.Type == elf.PT_DYNAMIC {
			dyn = ph
			break
		}
	}
	if dyn == nil {
		return 0, fmt.Errorf("%s has no dynamic section (a static program has no link_map)", exe.path)
	}
	w := p.wordSize()
	n := min(dyn.Memsz/uint64(2*w), maxDynEntries)
	buf := make([]byte, n*uint64(2*w))
	addr := dyn.Vaddr + exe.bias
	got, _ := p.core.ReadMemory(addr, buf)
	if got < 2*w {
		return 0, fmt.Errorf("the dynamic section at %#x is not in the core", addr)
	}
	for i := 0; i+2*w <= got; i += 2 * w {
		tag, val := p.word(buf[i:]), p.word(buf[i+w:])
		switch tag {
		case dtNull:
			return 0, fmt.Errorf("the dynamic section at %#x has no DT_DEBUG", addr)
		case dtDebug:
			if val == 0 {
				return 0, fmt.Errorf("DT_DEBUG at %#x is 0: the dynamic linker had not started", addr+uint64(i))
			}
			return val, nil
		}
	}
	return 0, fmt.Errorf("no DT_DEBUG in the %d dynamic entries at %#x read from the core", got/(2*w), addr)
}

// readWord reads a pointer-sized word of the process.
func (p *Process) readWord(addr uint64) (uint64, error) {
	b := make([]byte, p.wordSize())
	if _, err := p.ReadMemory(addr, b); err != nil {
		return 0, err
	}
	return p.word(b), nil
}

// word decodes a pointer-sized little-endian word at the start of b.
func (p *Process) word(b []byte) uint64 {
	if p.wordSize() == 4 {
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// readCString reads a NUL-terminated string of at most max bytes through
// ReadMemory (core segments, then module files).
func (p *Process) readCString(addr uint64, max int) string {
	if s := p.core.ReadCString(addr, max); s != "" {
		return s
	}
	var out []byte
	chunk := make([]byte, 64)
	for len(out) < max {
		n, _ := p.ReadMemory(addr+uint64(len(out)), chunk)
		if n == 0 {
			return ""
		}
		for _, c := range chunk[:n] {
			if c == 0 {
				return string(out)
			}
			out = append(out, c)
		}
	}
	return ""
}
