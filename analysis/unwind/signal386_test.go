package unwind

import (
	"encoding/binary"
	"testing"
)

// flatMemory is process memory from address base.
type flatMemory struct {
	base uint64
	b    []byte
}

func (m *flatMemory) ReadMemory(addr uint64, p []byte) (int, error) {
	if addr < m.base || addr-m.base >= uint64(len(m.b)) {
		return 0, &MemoryError{Addr: addr, Size: len(p)}
	}
	n := copy(p, m.b[addr-m.base:])
	if n < len(p) {
		return n, &MemoryError{Addr: addr + uint64(n), Size: len(p) - n}
	}
	return n, nil
}

// TestI386SignalFrames: the interrupted registers come from the struct
// sigcontext of a sigframe (glibc's __restore: at sp+4 before its pop
// %eax, at sp after it) and from the ucontext rt_sigframe.puc points at
// (__restore_rt), with the registers in sigcontext's order (gs, fs, es,
// ds, edi, esi, ebp, esp, ebx, edx, ecx, eax, trapno, err, eip), as gdb's
// i386_linux_sigcontext_addr finds them. The real cores' signal frames
// are in analysis/realworld's TestI386Cores (handler).
func TestI386SignalFrames(t *testing.T) {
	const code, stack = 0x1000, 0x8000
	mem := &flatMemory{base: code, b: make([]byte, 0x10000)}
	put := func(addr uint64, b ...byte) { copy(mem.b[addr-code:], b) }
	word := func(addr, v uint64) { binary.LittleEndian.PutUint32(mem.b[addr-code:], uint32(v)) }
	put(0x1100, i386SigreturnCode...)
	put(0x1200, i386RtSigreturnCode...)
	sigcontext := func(at uint64) {
		for i, v := range []uint64{0, 0, 0, 0, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 14, 6, 0x4242} {
			word(at+uint64(i)*4, v) // edi=0x11 ... eax=0x18, eip=0x4242
		}
	}
	m := &memReader{mem: mem, arch: I386}
	check := func(name string, sp, pc uint64) {
		t.Helper()
		if !i386Sigreturn(m, pc) {
			t.Fatalf("%s: pc %#x not recognised as the trampoline", name, pc)
		}
		r, err := i386SignalContext(m, sp, pc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := map[string]uint64{"edi": 0x11, "esi": 0x12, "ebp": 0x13, "esp": 0x14, "ebx": 0x15, "edx": 0x16, "ecx": 0x17, "eax": 0x18, "eip": 0x4242}
		got := r.Named()
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %#x, want %#x", name, k, got[k], v)
			}
		}
	}
	sigcontext(stack + 4)
	check("__restore before pop", stack, 0x1100)
	sigcontext(stack)
	check("__restore after pop", stack, 0x1101)
	check("__restore at int $0x80", stack, 0x1106)
	word(stack+8, stack+0x100) // puc
	sigcontext(stack + 0x100 + 20)
	check("__restore_rt", stack, 0x1200)
	check("__restore_rt at int $0x80", stack, 0x1205)
	if i386Sigreturn(m, 0x1102) || i386Sigreturn(m, 0x1300) {
		t.Error("a pc inside the trampoline's mov, or elsewhere, taken for the trampoline")
	}
}
