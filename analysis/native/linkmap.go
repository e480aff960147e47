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

// Layouts on 64-bit targets (glibc elf/link.h, checked with offsetof on
// x86-64 and aarch64): struct r_debug { int r_version; struct link_map
// *r_map; ElfW(Addr) r_brk; int r_state; ElfW(Addr) r_ldbase; } and struct
// link_map { ElfW(Addr) l_addr; char *l_name; ElfW(Dyn) *l_ld; struct
// link_map *l_next, *l_prev; }.
const (
	rDebugMapOff  = 8
	linkMapAddr   = 0
	linkMapName   = 8
	linkMapLd     = 16
	linkMapNext   = 24
	linkMapSize   = 40
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
	lm, err := p.readWord(rdebug + rDebugMapOff)
	if err != nil {
		return 0, fmt.Errorf("r_debug at %#x: %w", rdebug, err)
	}
	seen := map[uint64]bool{}
	added := 0
	for ; lm != 0 && !seen[lm]; lm, err = p.readWord(lm + linkMapNext) {
		if len(seen) >= maxLinkMaps {
			return added, fmt.Errorf("more than %d link_map entries", maxLinkMaps)
		}
		seen[lm] = true
		var b [linkMapSize]byte
		if n, _ := p.ReadMemory(lm, b[:]); n < len(b) {
			return added, fmt.Errorf("link_map entry at %#x is not in the core", lm)
		}
		bo := binary.LittleEndian
		addr, nameAt, ld := bo.Uint64(b[linkMapAddr:]), bo.Uint64(b[linkMapName:]), bo.Uint64(b[linkMapLd:])
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
	n := min(dyn.Memsz/16, maxDynEntries)
	buf := make([]byte, n*16)
	addr := dyn.Vaddr + exe.bias
	got, _ := p.core.ReadMemory(addr, buf)
	if got < 16 {
		return 0, fmt.Errorf("the dynamic section at %#x is not in the core", addr)
	}
	for i := 0; i+16 <= got; i += 16 {
		tag, val := binary.LittleEndian.Uint64(buf[i:]), binary.LittleEndian.Uint64(buf[i+8:])
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
	return 0, fmt.Errorf("no DT_DEBUG in the %d dynamic entries at %#x read from the core", got/16, addr)
}

func (p *Process) readWord(addr uint64) (uint64, error) {
	var b [8]byte
	if _, err := p.ReadMemory(addr, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
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
