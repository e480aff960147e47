package elfcore

import (
	"debug/elf"
	"strings"
)

// Thread is one thread of the process: its NT_PRSTATUS and the register-set
// notes the kernel wrote after it.
type Thread struct {
	LWP        int    // pr_pid: the kernel thread id
	Signal     int    // pr_cursig: the signal the thread was handling (0 if none)
	SigPending uint64 // pr_sigpend
	SigHeld    uint64 // pr_sighold: the blocked-signal mask
	PPID       int
	PGRP       int
	SID        int
	// Regs are the pr_reg words in the kernel's order for the core's
	// machine: x86-64 struct user_regs_struct (27 words, see X86_64Regs);
	// aarch64 struct user_pt_regs x0..x30, sp, pc, pstate (34 words).
	Regs []uint64
	// SigInfo is the NT_SIGINFO written after this thread's NT_PRSTATUS, if
	// any (the kernel writes one, for the first thread; gdb may write one
	// per thread).
	SigInfo *SigInfo
	FPRegs  []byte // NT_PRFPREG, raw (a copy, at most 1 MiB)
	XState  []byte // NT_X86_XSTATE, raw XSAVE area (a copy, at most 1 MiB)
	Notes   []Note // the thread's other "CORE"/"LINUX" notes, raw

	machine elf.Machine
}

// SigInfo is a siginfo_t (linux/include/uapi/asm-generic/siginfo.h).
type SigInfo struct {
	Signo, Errno, Code int32
	// Addr is si_addr, the faulting address, for SIGSEGV, SIGBUS, SIGILL,
	// SIGFPE and SIGTRAP raised by the kernel (Code > 0).
	Addr uint64
	// Pid and Uid are si_pid and si_uid of the sender, for signals sent by
	// kill, tkill, tgkill or sigqueue (Code <= 0: SI_USER, SI_TKILL, ...).
	Pid, Uid int32
	// Syscall and Arch are si_syscall and si_arch of a SIGSYS a seccomp
	// filter raised (Code SYS_SECCOMP); Addr is then si_call_addr.
	Syscall int32
	Arch    uint32
}

// FromUser reports whether the signal was sent by a process (kill, tgkill,
// raise, abort) rather than raised by the kernel for a fault.
func (s *SigInfo) FromUser() bool { return s.Code <= 0 }

// ProcessInfo is NT_PRPSINFO (struct elf_prpsinfo).
type ProcessInfo struct {
	PID, PPID, PGRP, SID int
	UID, GID             uint32
	State                byte   // pr_sname: the state letter, as in /proc/PID/stat ('R', 'S', 'D', ...)
	Fname                string // pr_fname: the command name, at most 15 bytes
	Args                 string // pr_psargs: the start of the command line, at most 80 bytes, arguments separated by spaces
}

// AuxEntry is one entry of the auxiliary vector (NT_AUXV).
type AuxEntry struct{ Type, Val uint64 }

// Layout of struct elf_prstatus (linux/include/linux/elfcore.h, glibc
// sys/procfs.h), checked with offsetof on x86-64: pr_info (si_signo,
// si_code, si_errno) at 0, pr_cursig at 12, pr_sigpend at 16, pr_sighold,
// pr_pid/ppid/pgrp/sid, four struct timeval, pr_reg, then pr_fpvalid. With
// 8-byte longs pr_sighold is at 24, pr_pid at 32, pr_reg at 112 (sizeof
// 336 on x86-64, 392 on aarch64); with 4-byte longs (i386) at 20, 24 and
// 72 (sizeof 144). The offsets are in layout.
const (
	nRegsX86_64  = 27 // ELF_NGREG: sizeof(struct user_regs_struct)/8
	nRegsAArch64 = 34 // sizeof(struct user_pt_regs)/8
	nRegsI386    = 17 // sizeof(struct user_regs_struct)/4 on i386
)

func (c *Core) nRegs() int {
	switch c.Machine {
	case elf.EM_AARCH64:
		return nRegsAArch64
	case elf.EM_386:
		return nRegsI386
	}
	return nRegsX86_64
}

func (c *Core) decodePrstatus(n rawNote) Thread {
	t := Thread{machine: c.Machine}
	r := newCursor(n.desc, c.ByteOrder, n.off)
	r.Skip(12) // pr_info: already in NT_SIGINFO, and pr_cursig below
	l := c.lay
	t.Signal = int(r.I16())
	r.Seek(l.prSigpend)
	t.SigPending = r.Uint(l.word)
	t.SigHeld = r.Uint(l.word)
	t.LWP = int(r.I32())
	t.PPID = int(r.I32())
	t.PGRP = int(r.I32())
	t.SID = int(r.I32())
	r.Seek(l.prReg)
	nregs := c.nRegs()
	if regs := r.Bytes(nregs * l.word); regs != nil {
		t.Regs = make([]uint64, nregs)
		for i := range t.Regs {
			if l.word == 4 {
				t.Regs[i] = uint64(c.ByteOrder.Uint32(regs[i*4:]))
			} else {
				t.Regs[i] = c.ByteOrder.Uint64(regs[i*8:])
			}
		}
	}
	if r.Err() != nil {
		c.problem(n.off, "NT_PRSTATUS of %d bytes is too short for %v (need %d); thread %d has no registers", len(n.desc), c.Machine, l.prReg+nregs*l.word, t.LWP)
	}
	return t
}

// Layout of struct elf_prpsinfo: pr_state, pr_sname, pr_zomb, pr_nice (1
// byte each), pr_flag (a long), pr_uid, pr_gid, pr_pid, pr_ppid, pr_pgrp,
// pr_sid, pr_fname[16], pr_psargs[80]. On 64-bit Linux (checked with
// offsetof on x86-64) 136 bytes, uid at 16, fname at 40; on i386, whose
// __kernel_uid_t is 16 bits, 124 bytes, uid at 8, fname at 28.
func (c *Core) decodePrpsinfo(n rawNote) *ProcessInfo {
	l := c.lay
	if len(n.desc) < l.prpsinfoSize {
		c.problem(n.off, "NT_PRPSINFO of %d bytes is shorter than %d; ignored", len(n.desc), l.prpsinfoSize)
		return nil
	}
	r := newCursor(n.desc, c.ByteOrder, n.off)
	p := &ProcessInfo{}
	r.Skip(1)
	p.State = r.U8()
	r.Seek(l.prUID)
	p.UID = uint32(r.Uint(l.uidSize))
	p.GID = uint32(r.Uint(l.uidSize))
	p.PID = int(r.I32())
	p.PPID = int(r.I32())
	p.PGRP = int(r.I32())
	p.SID = int(r.I32())
	r.Seek(l.prFname)
	p.Fname = r.FixedString(16)
	p.Args = strings.TrimRight(r.FixedString(80), " ")
	return p
}

// siginfo_t is 128 bytes: si_signo, si_errno, si_code (int32 each), then the
// union (asm-generic/siginfo.h), at offset 16 with 8-byte pointers and 12
// with 4-byte ones: _sigfault.si_addr, or _kill.si_pid and si_uid. The
// least worth reading is the union's first 8 bytes.

// Signal numbers whose kernel-generated siginfo carries si_addr.
const (
	sigILL  = 4
	sigTRAP = 5
	sigBUS  = 7
	sigFPE  = 8
	sigSEGV = 11
	sigSYS  = 31
)

func (c *Core) decodeSiginfo(n rawNote) *SigInfo {
	l := c.lay
	if min := l.siginfoUnion + 8; len(n.desc) < min {
		c.problem(n.off, "NT_SIGINFO of %d bytes is shorter than %d; ignored", len(n.desc), min)
		return nil
	}
	r := newCursor(n.desc, c.ByteOrder, n.off)
	s := &SigInfo{Signo: r.I32(), Errno: r.I32(), Code: r.I32()}
	r.Seek(l.siginfoUnion)
	if s.FromUser() {
		s.Pid = r.I32()
		s.Uid = r.I32()
		return s
	}
	switch s.Signo {
	case sigSEGV, sigBUS, sigILL, sigFPE, sigTRAP:
		s.Addr = r.Uint(l.word)
	case sigSYS:
		// struct { void *_call_addr; int _syscall; unsigned int _arch; } _sigsys
		s.Addr = r.Uint(l.word)
		s.Syscall = r.I32()
		s.Arch = r.U32()
	}
	return s
}

// decodeAuxv reads the auxiliary vector: pairs of longs (type, value).
func (c *Core) decodeAuxv(n rawNote) []AuxEntry {
	w := c.lay.word
	cnt := len(n.desc) / (2 * w)
	if cnt > maxAuxv {
		c.problem(n.off, "NT_AUXV has %d entries; keeping %d", cnt, maxAuxv)
		cnt = maxAuxv
	}
	out := make([]AuxEntry, 0, cnt)
	r := newCursor(n.desc, c.ByteOrder, n.off)
	for i := 0; i < cnt; i++ {
		e := AuxEntry{Type: r.Uint(w), Val: r.Uint(w)}
		if e.Type == 0 { // AT_NULL
			break
		}
		out = append(out, e)
	}
	return out
}
