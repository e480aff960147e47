package native

import (
	"debug/elf"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
	"github.com/faultline-dev/faultline/analysis/elfcore"
	"github.com/faultline-dev/faultline/analysis/regular"
)

// Step 1 of loading (modules.go): which ELF objects the process had mapped,
// and where. With NT_FILE: one module per load of a file; without it, the
// executable and the link_map list (linkmap.go). The vDSO is discovered,
// located and attached at once: its image is in the core.

// discoverMapped is step 1 of loading for a core with NT_FILE: a module
// for each load of an ELF file, in address order, with its build-id from the
// headers the core dumped; entry (AT_ENTRY) marks the executable.
func (p *Process) discoverMapped(entry uint64) []*module {
	var mods []*module
	for _, g := range fileMappings(p.core) {
		if !p.looksLikeELF(g.path, g.base) {
			continue
		}
		m := &module{path: g.path, lo: g.lo, hi: g.hi, base: g.base}
		m.isExe = entry != 0 && entry >= g.lo && entry < g.hi
		m.buildID = p.core.BuildIDAt(g.base)
		mods = append(mods, m)
	}
	return mods
}

// mapping is one load of a file: the NT_FILE ranges from a mapping of its
// offset 0 up to the next one. A file mapped twice (a program that mmaps
// an already loaded library to read its ELF data, as ASan's symbolizer,
// gdb's Python or V8 do) has two, and only the dynamic loader's holds code.
type mapping struct {
	path   string
	lo, hi uint64
	base   uint64 // the address of file offset 0
	exec   bool   // one of its ranges is mapped executable
}

// fileMappings splits the core's NT_FILE ranges into loads of files, in
// address order, and keeps for each file the loads that hold executable
// code (all of them when none does: a file mapped only as data).
func fileMappings(core *elfcore.Core) []*mapping {
	var all []*mapping
	cur := map[string]*mapping{}
	for _, f := range core.Files {
		g := cur[f.Path]
		if g != nil && f.FileOffset != 0 && !sameLoad(g, f) {
			continue // the file mapped again elsewhere, not from its start: not a load
		}
		if f.FileOffset == 0 || g == nil {
			if f.FileOffset != 0 {
				continue // no mapping of its start (no ELF header): not a load
			}
			g = &mapping{path: f.Path, lo: f.Start, hi: f.End, base: f.Start}
			cur[f.Path] = g
			all = append(all, g)
		}
		g.lo, g.hi = min(g.lo, f.Start), max(g.hi, f.End)
		g.exec = g.exec || executable(core, f.Start, f.End)
	}
	hasExec := map[string]bool{}
	for _, g := range all {
		hasExec[g.path] = hasExec[g.path] || g.exec
	}
	var out []*mapping
	for _, g := range all {
		if g.exec || !hasExec[g.path] {
			out = append(out, g)
		}
	}
	return out
}

// maxSegmentSlack bounds how far past its file offset a segment of one
// load may sit (ELF segments are placed at vaddr ≡ offset modulo their
// alignment, at most 2 MiB on x86-64 and 64 KiB on aarch64; linkers leave
// gaps of a page or a few).
const maxSegmentSlack = 2 << 20

// sameLoad reports whether NT_FILE range f continues load g: it lies past
// g's start where the file offset says, give or take the alignment slack.
// A part of the file mapped elsewhere (V8 reading its snapshot from its
// own binary) does not.
func sameLoad(g *mapping, f elfcore.MappedFile) bool {
	if f.Start < g.base {
		return false
	}
	d := f.Start - g.base
	return d >= f.FileOffset && d-f.FileOffset < maxSegmentSlack
}

// executable reports whether a core segment (one per VMA, with the VMA's
// permissions) overlapping [lo, hi) is executable.
func executable(core *elfcore.Core, lo, hi uint64) bool {
	segs := core.Segments
	i := sort.Search(len(segs), func(i int) bool { return segs[i].End() > lo })
	for ; i < len(segs) && segs[i].Vaddr < hi; i++ {
		if segs[i].Flags&elf.PF_X != 0 {
			return true
		}
	}
	return false
}

// looksLikeELF reports whether a mapping is an ELF object: by the header the
// core dumped at its start, else by the file on disk.
func (p *Process) looksLikeELF(path string, base uint64) bool {
	var magic [4]byte
	if n, _ := p.core.ReadMemory(base, magic[:]); n == 4 {
		return string(magic[:]) == "\x7fELF"
	}
	// The path comes from the core: a FIFO, a device or /dev/stdin is
	// never opened for reading (regular.ReadAt), nor waited on.
	n, err := regular.ReadAt(path, magic[:], 0)
	var nr *regular.NotRegularError
	switch {
	case errors.As(err, &nr):
		return false
	case err != nil && !errors.Is(err, io.EOF):
		// Unknown: keep it only if it is named like a shared object or program.
		return strings.Contains(filepath.Base(path), ".so") || strings.HasPrefix(path, "/")
	}
	return n == 4 && string(magic[:]) == "\x7fELF"
}

// addVDSO adds the kernel's vDSO, whose image (and unwind info) is in the core.
func (p *Process) addVDSO(addr uint64) {
	var seg *elfcore.Segment
	for i := range p.core.Segments {
		s := &p.core.Segments[i]
		if addr >= s.Vaddr && addr < s.Vaddr+s.Filesz {
			seg = s
			break
		}
	}
	if seg == nil {
		return
	}
	size := min(seg.Vaddr+seg.Filesz-addr, 1<<20)
	data := make([]byte, size)
	if n, _ := p.core.ReadMemory(addr, data); uint64(n) != size {
		return
	}
	obj, err := object.NewObjectFromBytes("[vdso]", data)
	if err != nil {
		return
	}
	m := &module{path: "[vdso]", lo: addr, hi: seg.Vaddr + seg.Memsz, base: addr, obj: obj, buildID: obj.BuildID()}
	if vaddr, _, ok := obj.FirstLoadVaddr(); ok {
		m.bias = addr - vaddr
	} else {
		m.bias = addr
	}
	m.dbg = obj
	p.modules = append(p.modules, m)
}
