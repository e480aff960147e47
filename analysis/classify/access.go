package classify

import (
	"fmt"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// accessError explains SEGV_ACCERR: the address is mapped, but not with
// the access the instruction made. A write to a read-only mapping is its
// own kind, named by the section it hit (a string literal in .rodata).
func (a *analyzer) accessError(f *fault, addr uint64) {
	m, mapped, known := a.mappingAt(addr)
	if f.access == "write" && (!known || !mapped || !m.Writable()) {
		a.cls.Kind = model.KindWriteReadonly
		region := "a read-only page"
		if known && mapped {
			region = regionName(m)
			a.evidence("%#x is in %s, mapped %s: the write needs a writable page (SEGV_ACCERR)", addr, region, m.Perm)
		} else {
			a.evidence("%#x is mapped, but not writable (SEGV_ACCERR on a write)", addr)
		}
		a.cls.Summary = fmt.Sprintf("Write to read-only memory%s in %s: it wrote to %#x, in %s%s.", sectionParen(m), a.where(), addr, region, readonlyCause(m))
		return
	}
	a.cls.Kind = model.KindWildPointer
	perm := "without that permission"
	if known && mapped {
		perm = fmt.Sprintf("%s (%s)", m.Perm, regionName(m))
	}
	a.evidence("%#x is mapped %s, not with the access the instruction needs (%s)", addr, perm, orDefault(f.access, "access"))
	a.cls.Summary = fmt.Sprintf("Invalid access: %s %s %#x, which is mapped %s — a guard page or memory the program protected, reached by an out-of-bounds or stale pointer.", a.where(), orDefault(pastTense(f.access), "accessed"), addr, perm)
}

func pastTense(access string) string {
	switch access {
	case "read":
		return "read"
	case "write":
		return "wrote"
	}
	return ""
}

// sectionParen is " (.rodata)" for the section a write hit, "" when unknown.
func sectionParen(m model.Mapping) string {
	if m.Section == "" {
		return ""
	}
	return " (" + m.Section + ")"
}

// readonlyCause says what lives in the read-only region written to.
func readonlyCause(m model.Mapping) string {
	switch {
	case m.Section == ".rodata" || strings.HasPrefix(m.Section, ".rodata."):
		return ": a string literal or const data; copy it into writable memory (char buf[] = \"...\", strdup) before changing it"
	case m.Section == ".text" || m.Perm == "r-x":
		return ": the program's code; the pointer points at a function, not at data"
	case m.Section == ".data.rel.ro" || m.Section == ".got" || m.Section == ".init_array" || m.Section == ".fini_array" || m.Section == ".dynamic":
		return ": data the loader made read-only after relocation (RELRO); the pointer is corrupted or the code writes a const object"
	case m.File == "":
		return ": memory mapped read-only or protected with mprotect()"
	}
	return ""
}

// vectorUnaligned are the SSE/AVX moves that take any address; every
// other legacy SSE instruction with a 16-byte memory operand, and the
// aligned moves (movaps, movapd, movdqa, movntdq, ... and their VEX forms),
// raise #GP on an address that is not a multiple of the operand's size
// (Intel SDM Vol. 1 §4.1.1, Vol. 2 MOVAPS: "#GP If a memory operand is not
// aligned on a 16-byte boundary").
var vectorUnaligned = map[string]bool{"MOVUPS": true, "MOVUPD": true, "MOVDQU": true, "LDDQU": true,
	"MOVSS": true, "MOVSD": true, "MOVQ": true, "MOVD": true, "MOVLPS": true, "MOVHPS": true, "MOVLPD": true, "MOVHPD": true}

// misalignedVector reports (and classifies) a general-protection fault of
// an SSE access whose 16-byte (or wider) memory operand is not aligned.
func (a *analyzer) misalignedVector(f *fault) bool {
	if f.code != "SI_KERNEL" || !f.hasEA || f.size < 16 || vectorUnaligned[f.op] || !canonical(f.ea) {
		return false
	}
	width := uint64(f.size)
	if f.ea%width == 0 {
		return false
	}
	op := strings.Fields(f.text)[0]
	a.cls.Kind = model.KindMisaligned
	a.evidence("`%s` needs its %d-byte memory operand aligned to %d bytes, and the effective address %#x is %d mod %d: the CPU raised a general-protection fault (SIGSEGV, SI_KERNEL), not a page fault",
		op, f.size, f.size, f.ea, f.ea%width, width)
	unit, intrinsic := "SSE", "_mm_loadu_pd"
	if strings.HasPrefix(op, "v") {
		unit, intrinsic = "AVX", map[int]string{16: "_mm_loadu_pd", 32: "_mm256_loadu_pd", 64: "_mm512_loadu_pd"}[f.size]
	}
	unaligned := strings.NewReplacer("movaps", "movups", "movapd", "movupd", "movdqa", "movdqu").Replace(op)
	if unaligned == op {
		unaligned = "movupd"
	}
	a.cls.Summary = fmt.Sprintf("Misaligned %s access in %s: `%s` needs a %d-byte-aligned address and got %#x (%d mod %d); align the buffer (alignas(%d), aligned_alloc) or use an unaligned load or store (%s, %s).",
		unit, a.where(), op, f.size, f.ea, f.ea%width, width, f.size, unaligned, intrinsic)
	return true
}
