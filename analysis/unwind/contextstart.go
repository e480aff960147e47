package unwind

import "bytes"

// A stack that makecontext(3) set up ends at glibc's ucontext entry
// trampoline: makecontext pushes the address of __start_context as the
// return address of the context's function, and __start_context (which the
// function "returns" into) switches to uc_link or exits; no caller is
// recorded above it. The return address is the trampoline's first
// instruction, so the unwinder's pc-1 lookup finds no FDE of its own there
// (or another function's), and without this rule the frame-pointer chain or
// the stack scan would invent callers from stale words above the context's
// stack — the stack of the function that set the context up, or an older
// coroutine frame. gdb 13 has no such rule either: its prologue analyzer
// reads uc_link as a return address and then a 0 (analysis/realworld
// TestUcontextStackEndsAtStartContext).

// amd64StartContextCode is the start of glibc's x86-64 __start_context
// (sysdeps/unix/sysv/linux/x86_64/__start_context.S): mov %rbx,%rsp;
// mov (%rsp),%rdi (the uc_link makecontext stored above the arguments).
var amd64StartContextCode = []byte{0x48, 0x89, 0xdc, 0x48, 0x8b, 0x3c, 0x24}

// amd64ContextStart reports whether the return address pc is glibc's
// __start_context.
func amd64ContextStart(m *memReader, pc uint64) bool {
	var b [7]byte
	return m.read(pc, b[:]) == nil && bytes.Equal(b[:], amd64StartContextCode)
}
