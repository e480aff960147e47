package unwind

import (
	"encoding/binary"
	"fmt"
)

// Arch describes what the unwinder needs to know about one architecture:
// DWARF register numbers, names, the frame-pointer layout, the signal
// trampoline and the layout of the ucontext the kernel saves.
type Arch struct {
	Name    string // "x86_64", "aarch64", "i386"
	PtrSize int
	Order   binary.ByteOrder

	// DWARF register numbers of the program counter, stack pointer, frame
	// pointer and the return-address column of the architecture's CIEs.
	PC, SP, FP, RA int

	// RegNames names DWARF registers by number; "" for unnamed ones.
	RegNames []string
	// CalleeSaved are the registers a caller's value survives in when CFI gives
	// no rule for them (the psABI's callee-saved set). Other registers without
	// a rule are unknown in the caller.
	CalleeSaved []int

	// sigreturn reports whether pc is at the Linux sigreturn trampoline, by
	// reading the code through Memory.
	sigreturn func(m *memReader, pc uint64) bool
	// signalContext recovers the interrupted registers from the signal frame
	// whose trampoline frame has stack pointer sp and pc pc.
	signalContext func(m *memReader, sp, pc uint64) (Regs, error)
	// afterCall reports whether the instruction before ra is a call.
	afterCall func(m *memReader, ra uint64) bool
	// contextStart, when set, reports whether the return address ra is
	// the libc trampoline a makecontext(3) stack ends at (contextstart.go).
	contextStart func(m *memReader, ra uint64) bool
}

// RegName returns the name of DWARF register n, or "" if it has none.
func (a *Arch) RegName(n int) string {
	if n >= 0 && n < len(a.RegNames) {
		return a.RegNames[n]
	}
	return ""
}

// RegNumber returns the DWARF number of the register named name.
func (a *Arch) RegNumber(name string) (int, bool) {
	for i, n := range a.RegNames {
		if n != "" && n == name {
			return i, true
		}
	}
	return 0, false
}

// AMD64 is x86-64 under Linux. DWARF numbering per the System V AMD64 psABI
// §3.6.2, Figure 3.36: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp,
// 7 rsp, 8-15 r8-r15, 16 the return address (rip).
var AMD64 = &Arch{
	Name:    "x86_64",
	PtrSize: 8,
	Order:   binary.LittleEndian,
	PC:      16, SP: 7, FP: 6, RA: 16,
	RegNames: []string{
		"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
	},
	// psABI §3.2.1: rbx, rbp, r12-r15 belong to the caller.
	CalleeSaved:   []int{3, 6, 12, 13, 14, 15},
	sigreturn:     amd64Sigreturn,
	signalContext: amd64SignalContext,
	afterCall:     amd64AfterCall,
	contextStart:  amd64ContextStart,
}

// ARM64 is AArch64 under Linux. DWARF numbering per "DWARF for the Arm
// 64-bit Architecture" (AADWARF64) §4.1: 0-30 x0-x30, 31 sp, 32 pc; the
// return address column is x30 (lr).
var ARM64 = &Arch{
	Name:    "aarch64",
	PtrSize: 8,
	Order:   binary.LittleEndian,
	PC:      32, SP: 31, FP: 29, RA: 30,
	RegNames: func() []string {
		n := make([]string, 33)
		for i := range 31 {
			n[i] = fmt.Sprintf("x%d", i)
		}
		n[31], n[32] = "sp", "pc"
		return n
	}(),
	// AAPCS64 §6.1.1: x19-x29 are callee-saved (x30 is the return address).
	CalleeSaved:   []int{19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29},
	sigreturn:     arm64Sigreturn,
	signalContext: arm64SignalContext,
	afterCall:     arm64AfterCall,
}

// I386 is IA-32 under Linux. DWARF numbering per the System V i386 psABI
// (Intel386 supplement, "DWARF Register Number Mapping", as gcc and gdb
// number them): 0 eax, 1 ecx, 2 edx, 3 ebx, 4 esp, 5 ebp, 6 esi, 7 edi,
// 8 the return address (eip).
var I386 = &Arch{
	Name:    "i386",
	PtrSize: 4,
	Order:   binary.LittleEndian,
	PC:      8, SP: 4, FP: 5, RA: 8,
	RegNames: []string{"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "eip"},
	// i386 psABI "Registers and the Stack Frame": ebx, ebp, esi and edi
	// belong to the caller.
	CalleeSaved:   []int{3, 5, 6, 7},
	sigreturn:     i386Sigreturn,
	signalContext: i386SignalContext,
	afterCall:     amd64AfterCall, // the same call encodings, without REX
}
