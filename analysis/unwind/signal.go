package unwind

import (
	"bytes"
	"fmt"
)

// MemoryError is a failed read of the process's memory.
type MemoryError struct {
	Addr uint64
	Size int
}

func (e *MemoryError) Error() string { return fmt.Sprintf("cannot read memory at 0x%x", e.Addr) }

// memReader reads words and code bytes through Memory.
type memReader struct {
	mem  Memory
	arch *Arch
}

func (m *memReader) read(addr uint64, p []byte) error {
	if m.mem == nil {
		return &MemoryError{Addr: addr, Size: len(p)}
	}
	n, err := m.mem.ReadMemory(addr, p)
	if err != nil || n != len(p) {
		return &MemoryError{Addr: addr, Size: len(p)}
	}
	return nil
}

// uint reads a size-byte value in the architecture's byte order.
func (m *memReader) uint(addr uint64, size int) (uint64, error) {
	var b [8]byte
	if size < 1 || size > 8 {
		return 0, &MemoryError{Addr: addr, Size: size}
	}
	if err := m.read(addr, b[:size]); err != nil {
		return 0, err
	}
	var v uint64
	if m.arch.Order.Uint16([]byte{1, 0}) == 1 { // little-endian
		for i := size - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
	} else {
		for i := range size {
			v = v<<8 | uint64(b[i])
		}
	}
	return v, nil
}

func (m *memReader) word(addr uint64) (uint64, error) { return m.uint(addr, m.arch.PtrSize) }

// amd64SigreturnCode is glibc's __restore_rt (sysdeps/unix/sysv/linux/x86_64/
// libc_sigaction.c): mov $0xf,%rax (15 = rt_sigreturn); syscall.
var amd64SigreturnCode = []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}

// amd64Sigreturn reports whether pc is at the start of the trampoline or at
// its syscall instruction, as gdb's amd64_linux_sigtramp_start does.
func amd64Sigreturn(m *memReader, pc uint64) bool {
	var b [9]byte
	for _, start := range []uint64{pc, pc - 7} {
		if m.read(start, b[:]) == nil && bytes.Equal(b[:], amd64SigreturnCode) {
			return true
		}
	}
	return false
}

// amd64GregsToDWARF maps the gregs of <sys/ucontext.h> (REG_R8 = 0 ... REG_RIP
// = 16) to DWARF register numbers.
var amd64GregsToDWARF = [17]int{
	8, 9, 10, 11, 12, 13, 14, 15, // r8-r15
	5, 4, 6, 3, 1, 0, 2, 7, // rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp
	16, // rip
}

// amd64SignalContext reads the interrupted registers from the rt_sigframe
// (linux/arch/x86/include/asm/sigframe.h): after the handler returns into the
// trampoline, sp points at struct ucontext, whose uc_mcontext (struct
// sigcontext) starts at offset 40 (uc_flags, uc_link, stack_t uc_stack).
func amd64SignalContext(m *memReader, sp, _ uint64) (Regs, error) {
	const mcontext = 40
	var b [17 * 8]byte
	if err := m.read(sp+mcontext, b[:]); err != nil {
		return Regs{}, err
	}
	r := NewRegs(m.arch)
	for i, n := range amd64GregsToDWARF {
		r.Set(n, m.arch.Order.Uint64(b[i*8:]))
	}
	return r, nil
}

// amd64AfterCall reports whether the bytes before ra end with a call: e8
// rel32, or ff /2 with any ModRM form and an optional REX prefix.
func amd64AfterCall(m *memReader, ra uint64) bool {
	var b [8]byte // b[i] is the byte at ra-8+i
	if ra < 8 || m.read(ra-8, b[:]) != nil {
		return false
	}
	if b[3] == 0xe8 {
		return true
	}
	for l := 2; l <= 7; l++ {
		i := 8 - l
		if b[i] != 0xff {
			continue
		}
		modrm := b[i+1]
		if (modrm>>3)&7 != 2 {
			continue
		}
		mod, rm := modrm>>6, modrm&7
		n := 2
		switch mod {
		case 0:
			switch rm {
			case 4:
				n = 3
				if i+2 < 8 && b[i+2]&7 == 5 {
					n = 7
				}
			case 5:
				n = 6
			}
		case 1:
			n = 3
			if rm == 4 {
				n = 4
			}
		case 2:
			n = 6
			if rm == 4 {
				n = 7
			}
		}
		if n == l {
			return true
		}
	}
	return false
}

// arm64Sigreturn reports whether pc is at the vDSO's __kernel_rt_sigreturn
// (linux/arch/arm64/kernel/vdso/sigreturn.S): mov x8, #139; svc #0.
func arm64Sigreturn(m *memReader, pc uint64) bool {
	var b [8]byte
	if m.read(pc, b[:]) != nil {
		return false
	}
	o := m.arch.Order
	return o.Uint32(b[0:]) == 0xd2801168 && o.Uint32(b[4:]) == 0xd4000001
}

// arm64SignalContext reads the interrupted registers from the rt_sigframe
// (linux/arch/arm64/kernel/signal.c): siginfo (128 bytes), then struct
// ucontext whose uc_mcontext is at offset 176; struct sigcontext holds
// fault_address, regs[31], sp, pc (as gdb's aarch64-linux-tdep.c reads it).
func arm64SignalContext(m *memReader, sp, _ uint64) (Regs, error) {
	const regsAt = 128 + 176 + 8
	var b [33 * 8]byte
	if err := m.read(sp+regsAt, b[:]); err != nil {
		return Regs{}, err
	}
	r := NewRegs(m.arch)
	for i := range 33 {
		r.Set(i, m.arch.Order.Uint64(b[i*8:]))
	}
	return r, nil
}

// arm64AfterCall reports whether the instruction before ra is BL, BLR or
// one of the pointer-authenticating BLRA* forms.
func arm64AfterCall(m *memReader, ra uint64) bool {
	if ra < 4 || ra%4 != 0 {
		return false
	}
	insn, err := m.uint(ra-4, 4)
	if err != nil {
		return false
	}
	return insn&0xfc000000 == 0x94000000 || // BL
		insn&0xfffffc1f == 0xd63f0000 || // BLR
		insn&0xfefff800 == 0xd63f0800 // BLRAA, BLRAAZ, BLRAB, BLRABZ
}
