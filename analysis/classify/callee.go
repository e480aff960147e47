package classify

import (
	"fmt"
	"path"

	"github.com/faultline-dev/faultline/analysis/model"
)

// A call through a bad function pointer faults on the fetch of the first
// instruction at the target: si_addr is the pc, the "frame" there is no
// function at all, and the unwinder finds the caller from the return
// address the call pushed. The caller made the bad call: it is the
// culprit.

// fetchFault reports whether the fault is the fetch of the instruction at
// the pc itself: the program called or jumped to an address with no code
// there (si_addr is the pc). From a log without si_addr, a frame #0 at pc
// 0 is one too.
func (a *analyzer) fetchFault() bool {
	f := a.f
	if f == nil || f.sent || f.signo != sigSEGV || a.jitCode(a.start) {
		return false
	}
	if f.hasAddr && f.code != "SI_KERNEL" {
		return f.addr == f.pc && (f.regs != nil || a.c.Instruction != nil)
	}
	if f.hasAddr || a.start >= len(a.frames) {
		return false
	}
	top := a.frames[a.start]
	return top.Function == "" && top.PC != "" && top.Addr == 0 && !top.Signal
}

// badCall classifies a call or jump to an address with no code: NULL (plus
// an offset), a non-canonical value, data that is not executable, or
// memory nothing maps any more (a stale pointer into an unloaded library).
func (a *analyzer) badCall(f *fault) {
	target := f.pc
	a.evidence("the fault is the fetch of the instruction at the pc %#x itself: the program called or jumped there "+
		"(a function pointer, a vtable slot or a return address held %#x), and frame #%d is the caller that did", target, target, a.start+1)
	switch {
	case target < nullLimit:
		a.cls.Kind = model.KindNullDeref
		if target == 0 {
			a.cls.Summary = fmt.Sprintf("Call through a NULL function pointer in %s: the program jumped to address 0x0; find where that function pointer (a callback, a table entry, a vtable slot) should have been set.", a.where())
		} else {
			a.cls.Summary = fmt.Sprintf("Call through a NULL function pointer in %s: the program jumped to %#x, a function pointer read from a NULL table or object plus an offset; find where that table or object should have been set.", a.where(), target)
		}
	case !canonical(target):
		a.cls.Kind = model.KindWildPointer
		a.cls.Summary = fmt.Sprintf("Call through a corrupted function pointer in %s: it jumped to the non-canonical address %#x, which no pointer can hold (a smashed return address or an overwritten function pointer).", a.where(), target)
	default:
		a.badCallTarget(target)
	}
}

// badCallTarget explains a call to a canonical address: mapped data that
// is not executable, or nothing mapped at all.
func (a *analyzer) badCallTarget(target uint64) {
	a.cls.Kind = model.KindWildPointer
	m, mapped, known := a.mappingAt(target)
	if known && mapped {
		a.evidence("%#x is mapped %s (%s) but not executable", target, m.Perm, regionName(m))
		a.cls.Summary = fmt.Sprintf("Call into data from %s: it jumped to %#x, in %s, which is not executable — a function pointer that holds a data address (a corrupted pointer, or the wrong pointer cast to a function).", a.where(), target, regionName(m))
		return
	}
	if known {
		a.evidence("no mapping of the core holds %#x: the code there is no longer mapped", target)
	}
	if target >= mmapArea && target < 1<<47 {
		a.evidence("%#x lies at the top of the address space, where mmap places shared libraries: a library unloaded with dlclose() while a pointer to its code was kept", target)
	}
	a.cls.Summary = fmt.Sprintf("Call into code that is no longer mapped, from %s: it jumped to %#x, where nothing is mapped — a stale function pointer into a library unloaded with dlclose() (or freed JIT code), or a corrupted one; keep the library loaded while its functions are referenced.", a.where(), target)
}

// mmapArea is where x86-64 Linux's top-down mmap starts placing shared
// libraries and other mappings, below the stack (executables and the brk
// heap sit far lower, at 0x55…/0x56… under ASLR).
const mmapArea = 0x7f0000000000

// regionName names a mapping for a person: "the .rodata of kinds", "an
// anonymous mapping".
func regionName(m model.Mapping) string {
	switch {
	case m.File != "" && m.Section != "":
		return fmt.Sprintf("the %s of %s", m.Section, path.Base(m.File))
	case m.File != "":
		return path.Base(m.File)
	}
	return "an anonymous mapping"
}
