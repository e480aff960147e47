package unwind

import "bytes"

// The i386 sigreturn trampolines: glibc's __restore and __restore_rt
// (sysdeps/unix/sysv/linux/i386/libc_sigaction.c), which the vDSO's
// __kernel_sigreturn and __kernel_rt_sigreturn repeat
// (linux/arch/x86/entry/vdso/vdso32/sigreturn.S). A handler installed
// without SA_SIGINFO returns into the first, with a struct sigframe on the
// stack; one with SA_SIGINFO into the second, with a struct rt_sigframe.
var (
	// pop %eax; mov $0x77,%eax (119 = sigreturn); int $0x80
	i386SigreturnCode = []byte{0x58, 0xb8, 0x77, 0x00, 0x00, 0x00, 0xcd, 0x80}
	// mov $0xad,%eax (173 = rt_sigreturn); int $0x80
	i386RtSigreturnCode = []byte{0xb8, 0xad, 0x00, 0x00, 0x00, 0xcd, 0x80}
)

// i386Trampoline says which trampoline pc is in, and where it starts: at
// its first instruction or a later one, as gdb's
// i386_linux_sigtramp_start and i386_linux_rt_sigtramp_start look.
func i386Trampoline(m *memReader, pc uint64) (rt bool, start uint64, ok bool) {
	var b [8]byte
	for _, off := range []uint64{0, 1, 6} {
		if pc >= off && m.read(pc-off, b[:len(i386SigreturnCode)]) == nil && bytes.Equal(b[:], i386SigreturnCode) {
			return false, pc - off, true
		}
	}
	for _, off := range []uint64{0, 5} {
		if pc >= off && m.read(pc-off, b[:len(i386RtSigreturnCode)]) == nil && bytes.Equal(b[:len(i386RtSigreturnCode)], i386RtSigreturnCode) {
			return true, pc - off, true
		}
	}
	return false, 0, false
}

func i386Sigreturn(m *memReader, pc uint64) bool {
	_, _, ok := i386Trampoline(m, pc)
	return ok
}

// i386SigcontextToDWARF maps the words of struct sigcontext (linux/arch/
// x86/include/uapi/asm/sigcontext.h, i386: gs, fs, es, ds, edi, esi, ebp,
// esp, ebx, edx, ecx, eax, trapno, err, eip, ...) to DWARF register
// numbers; -1 for those the unwinder does not keep.
var i386SigcontextToDWARF = [15]int{-1, -1, -1, -1, 7, 6, 5, 4, 3, 2, 1, 0, -1, -1, 8}

// i386SignalContext reads the interrupted registers from the signal frame
// of the trampoline frame at sp, pc (gdb's i386_linux_sigcontext_addr).
// In __restore_rt, sp points at rt_sigframe.sig, followed by the pointers
// pinfo and puc: the ucontext's uc_mcontext is at puc + 20 (uc_flags,
// uc_link, stack_t). In __restore, struct sigcontext follows sig: at sp + 4
// before the trampoline's pop %eax, at sp after it.
func i386SignalContext(m *memReader, sp, pc uint64) (Regs, error) {
	rt, start, ok := i386Trampoline(m, pc)
	sc := sp
	switch {
	case ok && rt:
		uc, err := m.word(sp + 8)
		if err != nil {
			return Regs{}, err
		}
		sc = uc + 20
	case !ok || pc == start:
		sc = sp + 4 // a frame the CFI marked as a signal frame: at its start
	}
	var b [15 * 4]byte
	if err := m.read(sc, b[:]); err != nil {
		return Regs{}, err
	}
	r := NewRegs(m.arch)
	for i, n := range i386SigcontextToDWARF {
		if n >= 0 {
			r.Set(n, uint64(m.arch.Order.Uint32(b[i*4:])))
		}
	}
	return r, nil
}
