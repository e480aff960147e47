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

// Layout of struct elf_prstatus on 64-bit Linux (linux/include/linux/elfcore.h,
// glibc sys/procfs.h), checked with offsetof on x86-64: pr_info
// (si_signo, si_code, si_errno) at 0, pr_cursig at 12, pr_sigpend at 16,
// pr_sighold at 24, pr_pid/ppid/pgrp/sid at 32..44, four struct timeval at
// 48..111, pr_reg at 112, then pr_fpvalid. sizeof is 336 on x86-64 and 392
// on aarch64.
const (
	prstatusIDEnd  = 48 // end of pr_sid: the least of a prstatus worth keeping
	prstatusRegOff = 112
	nRegsX86_64    = 27 // ELF_NGREG: sizeof(struct user_regs_struct)/8
	nRegsAArch64   = 34 // sizeof(struct user_pt_regs)/8
)

func (c *Core) nRegs() int {
	if c.Machine == elf.EM_AARCH64 {
		return nRegsAArch64
	}
	return nRegsX86_64
}

func (c *Core) decodePrstatus(n rawNote) Thread {
	t := Thread{machine: c.Machine}
	r := newCursor(n.desc, c.ByteOrder, n.off)
	r.Skip(12) // pr_info: already in NT_SIGINFO, and pr_cursig below
	t.Signal = int(r.I16())
	r.Skip(2)
	t.SigPending = r.U64()
	t.SigHeld = r.U64()
	t.LWP = int(r.I32())
	t.PPID = int(r.I32())
	t.PGRP = int(r.I32())
	t.SID = int(r.I32())
	r.Seek(prstatusRegOff)
	nregs := c.nRegs()
	if regs := r.Bytes(nregs * 8); regs != nil {
		t.Regs = make([]uint64, nregs)
		for i := range t.Regs {
			t.Regs[i] = c.ByteOrder.Uint64(regs[i*8:])
		}
	}
	if r.Err() != nil {
		c.problem(n.off, "NT_PRSTATUS of %d bytes is too short for %v (need %d); thread %d has no registers", len(n.desc), c.Machine, prstatusRegOff+nregs*8, t.LWP)
	}
	return t
}

// Layout of struct elf_prpsinfo on 64-bit Linux (136 bytes, checked with
// offsetof on x86-64): pr_state, pr_sname, pr_zomb, pr_nice (1 byte each),
// pr_flag at 8, pr_uid 16, pr_gid 20, pr_pid 24, pr_ppid 28, pr_pgrp 32,
// pr_sid 36, pr_fname[16] at 40, pr_psargs[80] at 56.
const prpsinfoSize = 136

func (c *Core) decodePrpsinfo(n rawNote) *ProcessInfo {
	if len(n.desc) < prpsinfoSize {
		c.problem(n.off, "NT_PRPSINFO of %d bytes is shorter than %d; ignored", len(n.desc), prpsinfoSize)
		return nil
	}
	r := newCursor(n.desc, c.ByteOrder, n.off)
	p := &ProcessInfo{}
	r.Skip(1)
	p.State = r.U8()
	r.Seek(16)
	p.UID = r.U32()
	p.GID = r.U32()
	p.PID = int(r.I32())
	p.PPID = int(r.I32())
	p.PGRP = int(r.I32())
	p.SID = int(r.I32())
	p.Fname = r.FixedString(16)
	p.Args = strings.TrimRight(r.FixedString(80), " ")
	return p
}

// siginfo_t is 128 bytes: si_signo, si_errno, si_code (int32 each), then the
// union at offset 16 on 64-bit (asm-generic/siginfo.h): _sigfault.si_addr,
// or _kill.si_pid and si_uid.
const siginfoMin = 24

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
	if len(n.desc) < siginfoMin {
		c.problem(n.off, "NT_SIGINFO of %d bytes is shorter than %d; ignored", len(n.desc), siginfoMin)
		return nil
	}
	r := newCursor(n.desc, c.ByteOrder, n.off)
	s := &SigInfo{Signo: r.I32(), Errno: r.I32(), Code: r.I32()}
	r.Skip(4)
	if s.FromUser() {
		s.Pid = r.I32()
		s.Uid = r.I32()
		return s
	}
	switch s.Signo {
	case sigSEGV, sigBUS, sigILL, sigFPE, sigTRAP:
		s.Addr = r.U64()
	case sigSYS:
		// struct { void *_call_addr; int _syscall; unsigned int _arch; } _sigsys
		s.Addr = r.U64()
		s.Syscall = r.I32()
		s.Arch = r.U32()
	}
	return s
}

func (c *Core) decodeAuxv(n rawNote) []AuxEntry {
	cnt := len(n.desc) / 16
	if cnt > maxAuxv {
		c.problem(n.off, "NT_AUXV has %d entries; keeping %d", cnt, maxAuxv)
		cnt = maxAuxv
	}
	out := make([]AuxEntry, 0, cnt)
	for i := 0; i < cnt; i++ {
		e := AuxEntry{Type: c.ByteOrder.Uint64(n.desc[i*16:]), Val: c.ByteOrder.Uint64(n.desc[i*16+8:])}
		if e.Type == 0 { // AT_NULL
			break
		}
		out = append(out, e)
	}
	return out
}
