package classify

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/model"
)

// segv classifies a SIGSEGV the CPU raised: a poison value in the address
// or the pointer, a jump to an address with no code (a NULL or stale
// function pointer), a NULL pointer plus an offset, the stack's guard page,
// a non-canonical address, a write to read-only memory, a misaligned SSE
// access, or an unmapped address.
func (a *analyzer) segv(f *fault) {
	a.instructionEvidence(f)
	addr, hasAddr := a.segvAddress(f)
	base, baseVal, hasBase := f.memBase()
	if a.poisoned(addr, hasAddr, base, baseVal, hasBase) {
		return
	}
	switch {
	case a.fetchFault():
		a.badCall(f)
	case hasAddr && addr < nullLimit:
		a.nullDeref(f, addr, base, hasBase && baseVal == 0)
	case a.stackOverflow(f, addr, hasAddr):
	case hasAddr && !canonical(addr):
		a.cls.Kind = model.KindWildPointer
		a.evidence("%#x is non-canonical (bits 63-47 differ): no x86-64 pointer can hold it, so it is garbage or a poison value", addr)
		a.cls.Summary = fmt.Sprintf("Wild pointer: %s dereferenced the non-canonical address %#x, a corrupted or poisoned pointer.", a.where(), addr)
	case a.misalignedVector(f):
	case f.code == "SEGV_ACCERR" && hasAddr:
		a.accessError(f, addr)
	default:
		a.unmapped(f, addr, hasAddr, base, baseVal, hasBase)
	}
}

// segvAddress is the address the fault is about: si_addr, or for a
// general-protection fault (SI_KERNEL, si_addr 0) the instruction's
// effective address.
func (a *analyzer) segvAddress(f *fault) (uint64, bool) {
	if f.hasAddr && f.code != "SI_KERNEL" {
		a.evidence("fault address (%s) %#x, %s", orDefault(f.addrFrom, "si_addr"), f.addr, f.code)
		return f.addr, true
	}
	if !f.hasEA {
		return 0, false
	}
	if f.code == "SI_KERNEL" {
		a.evidence("si_code SI_KERNEL with si_addr 0: a general-protection fault, whose address the kernel does not "+
			"report; the instruction's effective address is %#x", f.ea)
	}
	return f.ea, true
}

// poisoned classifies an address or pointer register made of an
// allocator's or runtime's fill pattern, and reports whether one was.
func (a *analyzer) poisoned(addr uint64, hasAddr bool, base string, baseVal uint64, hasBase bool) bool {
	for _, v := range []struct {
		what string
		val  uint64
		ok   bool
	}{{"the fault address", addr, hasAddr}, {"%" + base, baseVal, hasBase}} {
		if !v.ok || v.val < nullLimit {
			continue
		}
		p, ok := matchPoison(v.val)
		if !ok {
			continue
		}
		a.evidence("%s %#x is %s", v.what, v.val, p.what)
		if p.freed {
			a.cls.Kind = model.KindUseAfterFree
			a.cls.Summary = fmt.Sprintf("Use after free: %s reads a pointer from memory that was already freed (%s holds a freed-memory pattern); find who frees the object and who still holds it.", a.where(), v.what)
		} else {
			a.cls.Kind = model.KindWildPointer
			a.cls.Summary = fmt.Sprintf("Wild pointer: %s used a pointer made of %s; find where it was overwritten or never initialised.", a.where(), p.what)
		}
		return true
	}
	return false
}

func (a *analyzer) nullDeref(f *fault, addr uint64, base string, baseNull bool) {
	a.cls.Kind = model.KindNullDeref
	switch {
	case baseNull && addr == 0:
		a.evidence("%%%s is NULL and %s is 0x0: the NULL pointer itself was dereferenced", base, addrWord(f))
	case baseNull:
		a.evidence("%%%s is NULL and %s is %#x: the NULL pointer plus the field offset %#x", base, addrWord(f), addr, addr)
	default:
		a.evidence("%#x lies in the unmapped first 64 KiB: a NULL pointer plus an offset", addr)
	}
	a.cls.Summary = fmt.Sprintf("NULL pointer dereference in %s: %s", a.where(), a.nullDetail(f, base, baseNull, addr))
}

func addrWord(f *fault) string {
	if f.code == "SI_KERNEL" {
		return "the effective address"
	}
	return "the fault address"
}

func (a *analyzer) nullDetail(f *fault, base string, baseNull bool, addr uint64) string {
	s := ""
	if baseNull {
		s = fmt.Sprintf("the pointer in %%%s is NULL", base)
		if addr != 0 {
			s += fmt.Sprintf(" and the code reads the field at offset %#x", addr)
		}
	} else {
		s = fmt.Sprintf("the access at %#x is a NULL pointer plus an offset", addr)
	}
	return s + "; check where that pointer is set and why it can be NULL here."
}

// unmapped is the rest: an access to an address nothing maps. A pointer
// register that is not 8-byte aligned, used by an access wider than a
// byte, is a pointer read from corrupted memory.
func (a *analyzer) unmapped(f *fault, addr uint64, hasAddr bool, base string, baseVal uint64, hasBase bool) {
	a.cls.Kind = model.KindWildPointer
	if hasBase && baseVal%8 != 0 && f.size > 1 {
		a.evidence("%%%s = %#x is not 8-byte aligned and the %d-byte access through it faulted: a pointer loaded from corrupted memory", base, baseVal, f.size)
		a.cls.Summary = fmt.Sprintf("Wild pointer: %s followed the misaligned pointer %#x; the structure it came from is corrupted (a data race or use after free).", a.where(), baseVal)
		return
	}
	if !hasAddr {
		a.unknownAddress(f)
		return
	}
	if m, mapped, known := a.mappingAt(addr); known && mapped {
		a.evidence("%#x is in a mapping (%s %s) the core does not hold", addr, m.Perm, orDefault(m.File, "anonymous"))
	} else {
		a.evidence("%#x is not mapped in the process (%s)", addr, orDefault(f.code, "SEGV_MAPERR"))
	}
	a.cls.Summary = fmt.Sprintf("Wild pointer: %s accessed the unmapped address %#x; the pointer is corrupted, dangling or computed out of bounds.", a.where(), addr)
}

// unknownAddress: the input records the signal but no address and no
// instruction (a gdb or other log of the crash): the kind rests on what
// the log gives, and the summary says what is missing.
func (a *analyzer) unknownAddress(f *fault) {
	a.cls.Kind = model.KindUnknown
	a.evidence("the input records %s%s in %s but neither the fault address nor the faulting instruction: a NULL pointer "+
		"cannot be told from a wild one", f.name, parenthesized(f.code), a.where())
	a.cls.Summary = fmt.Sprintf("%s in %s; the fault address is not recorded here — analyze the core itself to tell a NULL pointer from a wild one.", f.name, a.where())
}
