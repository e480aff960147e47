package elfcore

import "debug/elf"

// X86_64Regs is struct user_regs_struct (linux/arch/x86/include/asm/user_64.h),
// the pr_reg of an x86-64 NT_PRSTATUS, field for field in the kernel's order.
type X86_64Regs struct {
	R15, R14, R13, R12, Rbp, Rbx, R11, R10, R9, R8             uint64
	Rax, Rcx, Rdx, Rsi, Rdi, OrigRax, Rip, Cs, Eflags, Rsp, Ss uint64
	FsBase, GsBase, Ds, Es, Fs, Gs                             uint64
}

// X86_64 returns the thread's registers by name; false if the core is not
// x86-64 or the thread has no registers.
func (t *Thread) X86_64() (X86_64Regs, bool) {
	r := t.Regs
	if t.machine != elf.EM_X86_64 || len(r) < nRegsX86_64 {
		return X86_64Regs{}, false
	}
	return X86_64Regs{
		R15: r[0], R14: r[1], R13: r[2], R12: r[3], Rbp: r[4], Rbx: r[5],
		R11: r[6], R10: r[7], R9: r[8], R8: r[9], Rax: r[10], Rcx: r[11],
		Rdx: r[12], Rsi: r[13], Rdi: r[14], OrigRax: r[15], Rip: r[16],
		Cs: r[17], Eflags: r[18], Rsp: r[19], Ss: r[20], FsBase: r[21],
		GsBase: r[22], Ds: r[23], Es: r[24], Fs: r[25], Gs: r[26],
	}, true
}

// AArch64Regs is struct user_pt_regs (linux/arch/arm64/include/uapi/asm/ptrace.h),
// the pr_reg of an aarch64 NT_PRSTATUS.
type AArch64Regs struct {
	X      [31]uint64 // x0..x30 (x29 is the frame pointer, x30 the link register)
	Sp     uint64
	Pc     uint64
	Pstate uint64
}

// AArch64 returns the thread's registers by name; false if the core is not
// aarch64 or the thread has no registers.
func (t *Thread) AArch64() (AArch64Regs, bool) {
	r := t.Regs
	if t.machine != elf.EM_AARCH64 || len(r) < nRegsAArch64 {
		return AArch64Regs{}, false
	}
	var a AArch64Regs
	copy(a.X[:], r[:31])
	a.Sp, a.Pc, a.Pstate = r[31], r[32], r[33]
	return a, true
}

// I386Regs is struct user_regs_struct of i386 (linux/arch/x86/include/asm/
// user_32.h), the pr_reg of an i386 NT_PRSTATUS, field for field in the
// kernel's order (each a 32-bit word).
type I386Regs struct {
	Ebx, Ecx, Edx, Esi, Edi, Ebp, Eax        uint64
	Ds, Es, Fs, Gs, OrigEax, Eip, Cs, Eflags uint64
	Esp, Ss                                  uint64
}

// I386 returns the thread's registers by name; false if the core is not
// i386 or the thread has no registers.
func (t *Thread) I386() (I386Regs, bool) {
	r := t.Regs
	if t.machine != elf.EM_386 || len(r) < nRegsI386 {
		return I386Regs{}, false
	}
	return I386Regs{
		Ebx: r[0], Ecx: r[1], Edx: r[2], Esi: r[3], Edi: r[4], Ebp: r[5], Eax: r[6],
		Ds: r[7], Es: r[8], Fs: r[9], Gs: r[10], OrigEax: r[11], Eip: r[12], Cs: r[13],
		Eflags: r[14], Esp: r[15], Ss: r[16],
	}, true
}

// PC returns the thread's program counter (rip, eip or pc); 0 if unknown.
func (t *Thread) PC() uint64 {
	switch t.machine {
	case elf.EM_X86_64:
		if len(t.Regs) >= nRegsX86_64 {
			return t.Regs[16]
		}
	case elf.EM_AARCH64:
		if len(t.Regs) >= nRegsAArch64 {
			return t.Regs[32]
		}
	case elf.EM_386:
		if len(t.Regs) >= nRegsI386 {
			return t.Regs[12]
		}
	}
	return 0
}

// SP returns the thread's stack pointer (rsp, esp or sp); 0 if unknown.
func (t *Thread) SP() uint64 {
	switch t.machine {
	case elf.EM_X86_64:
		if len(t.Regs) >= nRegsX86_64 {
			return t.Regs[19]
		}
	case elf.EM_AARCH64:
		if len(t.Regs) >= nRegsAArch64 {
			return t.Regs[31]
		}
	case elf.EM_386:
		if len(t.Regs) >= nRegsI386 {
			return t.Regs[15]
		}
	}
	return 0
}
