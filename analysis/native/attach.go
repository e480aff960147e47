package native

import (
	"debug/elf"
	"errors"
	"fmt"

	"github.com/faultline-dev/faultline/analysis/debuginfo/debugfile"
	"github.com/faultline-dev/faultline/analysis/debuginfo/object"
)

// Step 3 of loading (modules.go): a located file becomes the module's
// binary: opened (or taken from the Pool), the load bias computed from where
// its first page is mapped (l_addr for link_map entries), its debug file
// found and opened.

// attachBinary opens file as module m's binary, computes the load bias
// from where its first page is mapped, and finds its debug file.
func (p *Process) attachBinary(m *module, file string) {
	if p.fromPool(m, file) {
		return
	}
	obj, err := object.OpenObject(file)
	if err != nil {
		p.problem(m.path, "cannot read %s: %v", file, err)
		m.bias = m.base
		return
	}
	m.file, m.obj, m.locator = file, obj, p.locator
	if m.buildID == nil {
		m.buildID = obj.BuildID()
	}
	p.setBias(m)
	p.toPool(m, p.findDebug(m, file, obj))
}

// setBias computes module m's load bias from where its binary's first
// page is mapped.
func (p *Process) setBias(m *module) {
	if vaddr, off, ok := m.obj.FirstLoadVaddr(); ok {
		m.bias = m.base - (vaddr-off)&^0xfff
	} else {
		m.bias = m.base
	}
}

// findDebug finds and opens the debug file of module m, whose binary obj
// was opened from file. It returns the problems it reported.
func (p *Process) findDebug(m *module, file string, obj *object.Object) []string {
	dbgPath, probs := p.locator.FindDebug(file, obj)
	switch {
	case dbgPath == "":
	case dbgPath == file:
		m.dbg = obj
	default:
		d, err := object.OpenObject(dbgPath)
		if err != nil {
			probs = append(probs, fmt.Sprintf("cannot read debug file %s: %v", dbgPath, err))
		} else {
			m.dbg = d
		}
	}
	for _, pr := range probs {
		p.problem(m.path, "%s", pr)
	}
	return probs
}

// addExeWithoutNTFile maps the executable file exe at the address the
// entry point (AT_ENTRY) says.
func (p *Process) addExeWithoutNTFile(exe string, entry uint64) {
	obj, err := object.OpenObject(exe)
	if err != nil {
		p.problem(exe, "cannot read: %v", err)
		return
	}
	e := obj.ELF()
	m := &module{path: exe, file: exe, obj: obj, isExe: true, buildID: obj.BuildID(), locator: p.locator}
	m.bias = entry - e.Entry
	for _, ph := range e.Progs {
		if ph.Type == elf.PT_LOAD {
			if m.lo == 0 || ph.Vaddr+m.bias < m.lo {
				m.lo = ph.Vaddr + m.bias
			}
			m.hi = max(m.hi, ph.Vaddr+ph.Memsz+m.bias)
		}
	}
	m.base = m.lo
	p.findDebug(m, exe, obj)
	p.modules = append(p.modules, m)
	sortModules(p.modules)
	p.exe = m
}

// addLinkMapModule adds the object a link_map entry names: loaded with load
// bias l_addr, its dynamic section at l_ld.
func (p *Process) addLinkMapModule(name string, bias, ld uint64) {
	m := &module{path: name, base: bias, bias: bias}
	p.locate(m)
	m.bias = bias // l_addr is the bias; locate's page-rounded guess is not needed
	m.fromLinkMap = true
	m.setExtentFromFile(ld)
	p.modules = append(p.modules, m)
	sortModules(p.modules)
}

// setExtentFromFile sets a link_map module's address range from its file's
// PT_LOAD segments, or around l_ld when the file is not known.
func (m *module) setExtentFromFile(ld uint64) {
	bias := m.bias
	m.lo, m.hi = 0, 0
	if m.obj != nil {
		for _, ph := range m.obj.ELF().Progs {
			if ph.Type != elf.PT_LOAD {
				continue
			}
			lo, hi := ph.Vaddr+bias, ph.Vaddr+ph.Memsz+bias
			if m.lo == 0 || lo < m.lo {
				m.lo = lo &^ 0xfff
			}
			m.hi = max(m.hi, hi)
		}
		if m.buildID == nil {
			m.buildID = m.obj.BuildID()
		}
	}
	if m.hi <= m.lo && ld != 0 {
		// Without the file only l_ld (inside the object's data) is known.
		m.lo, m.hi = min(bias, ld), ld+1
	}
	m.ld = ld
	m.base = m.lo
}

// attachFetchedDebug opens a debug file debuginfod gave, or records why
// there is none.
func (p *Process) attachFetchedDebug(m *module, path string, err error) {
	if path != "" && m.obj != nil && m.dbg == nil {
		if o, oerr := object.OpenObject(path); oerr != nil {
			p.problem(m.path, "cannot read debug file %s from debuginfod: %v", path, oerr)
		} else {
			m.dbg = o
		}
	}
	if err != nil && !errors.Is(err, debugfile.ErrNotFound) {
		m.fetchErr = err
	}
}
