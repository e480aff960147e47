package native

import (
	"debug/elf"

	"github.com/faultline-dev/faultline/analysis/model"
)

// MappingAt describes the region of the address space holding addr: the
// core's PT_LOAD segment (range and permissions; the kernel writes one for
// every mapping, dumped or not), the file NT_FILE maps there and, when that
// file is a module at hand, its ELF section. ok is false when no segment
// holds addr: nothing was mapped there.
func (p *Process) MappingAt(addr uint64) (model.Mapping, bool) {
	var seg *struct{ lo, hi uint64 }
	var m model.Mapping
	for i := range p.core.Segments {
		s := &p.core.Segments[i]
		if addr >= s.Vaddr && addr < s.End() {
			seg = &struct{ lo, hi uint64 }{s.Vaddr, s.End()}
			m.Lo, m.Hi, m.Perm = s.Vaddr, s.End(), permString(s.Flags)
			break
		}
	}
	if seg == nil {
		return model.Mapping{}, false
	}
	for _, f := range p.core.Files {
		if addr >= f.Start && addr < f.End {
			m.File = f.Path
			break
		}
	}
	if mod := p.moduleAt(addr); mod != nil && mod.obj != nil && mod.obj.ELF() != nil {
		m.Section = sectionAt(mod.obj.ELF(), addr-mod.bias)
	}
	return m, true
}

// permString writes PT_LOAD flags as /proc/PID/maps does: "r-x".
func permString(f elf.ProgFlag) string {
	b := []byte("---")
	if f&elf.PF_R != 0 {
		b[0] = 'r'
	}
	if f&elf.PF_W != 0 {
		b[1] = 'w'
	}
	if f&elf.PF_X != 0 {
		b[2] = 'x'
	}
	return string(b)
}

// sectionAt names the allocated section holding the link-time address
// vaddr, "" when none does.
func sectionAt(f *elf.File, vaddr uint64) string {
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Size > 0 && vaddr >= s.Addr && vaddr < s.Addr+s.Size {
			return s.Name
		}
	}
	return ""
}
