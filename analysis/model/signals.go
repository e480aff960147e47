package model

import "fmt"

// Linux signal numbers and si_code values (asm-generic/signal.h, siginfo.h).
var signalNames = map[int]string{
	1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
	7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2",
	13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT", 17: "SIGCHLD",
	18: "SIGCONT", 19: "SIGSTOP", 20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU",
	23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ", 26: "SIGVTALRM", 27: "SIGPROF",
	28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS",
}

// SignalName returns "SIGSEGV" for 11, "SIG42" for unnamed numbers.
func SignalName(n int) string {
	if s, ok := signalNames[n]; ok {
		return s
	}
	if n >= 34 && n <= 64 {
		return fmt.Sprintf("SIGRT%d", n-34)
	}
	return fmt.Sprintf("SIG%d", n)
}

// SignalDescription is the text the shell and gdb print for a signal.
func SignalDescription(n int) string {
	switch n {
	case 4:
		return "Illegal instruction"
	case 5:
		return "Trace/breakpoint trap"
	case 6:
		return "Aborted"
	case 7:
		return "Bus error"
	case 8:
		return "Arithmetic exception"
	case 9:
		return "Killed"
	case 11:
		return "Segmentation fault"
	case 13:
		return "Broken pipe"
	case 15:
		return "Terminated"
	case 24:
		return "CPU time limit exceeded"
	case 25:
		return "File size limit exceeded"
	case 31:
		return "Bad system call"
	}
	return SignalName(n)
}

// Generic si_code values that any signal can carry.
var genericCodes = map[int32]string{
	0: "SI_USER", 0x80: "SI_KERNEL", -1: "SI_QUEUE", -2: "SI_TIMER", -3: "SI_MESGQ",
	-4: "SI_ASYNCIO", -5: "SI_SIGIO", -6: "SI_TKILL",
}

var faultCodes = map[int]map[int32]string{
	11: {1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR", 5: "SEGV_ACCADI",
		6: "SEGV_ADIDERR", 7: "SEGV_ADIPERR", 8: "SEGV_MTEAERR", 9: "SEGV_MTESERR", 10: "SEGV_CPERR"},
	7: {1: "BUS_ADRALN", 2: "BUS_ADRERR", 3: "BUS_OBJERR", 4: "BUS_MCEERR_AR", 5: "BUS_MCEERR_AO"},
	8: {1: "FPE_INTDIV", 2: "FPE_INTOVF", 3: "FPE_FLTDIV", 4: "FPE_FLTOVF", 5: "FPE_FLTUND",
		6: "FPE_FLTRES", 7: "FPE_FLTINV", 8: "FPE_FLTSUB", 14: "FPE_FLTUNK", 15: "FPE_CONDTRAP"},
	4: {1: "ILL_ILLOPC", 2: "ILL_ILLOPN", 3: "ILL_ILLADR", 4: "ILL_ILLTRP", 5: "ILL_PRVOPC",
		6: "ILL_PRVREG", 7: "ILL_COPROC", 8: "ILL_BADSTK", 9: "ILL_BADIADDR"},
	5:  {1: "TRAP_BRKPT", 2: "TRAP_TRACE", 3: "TRAP_BRANCH", 4: "TRAP_HWBKPT", 5: "TRAP_UNK"},
	31: {1: "SYS_SECCOMP", 2: "SYS_USER_DISPATCH"},
}

// SignalCodeName names si_code for signal signo, e.g. "SEGV_MAPERR".
func SignalCodeName(signo int, code int32) string {
	if code > 0 && code < 0x80 {
		if m, ok := faultCodes[signo]; ok {
			if s, ok := m[code]; ok {
				return s
			}
		}
	}
	if s, ok := genericCodes[code]; ok {
		return s
	}
	return fmt.Sprintf("%d", code)
}

// SignalHasAddress reports whether si_addr is meaningful for signo and code:
// the kernel fills it for faults it raised (positive codes, and SI_KERNEL
// for SIGSEGV general-protection faults, where it is 0).
func SignalHasAddress(signo int, code int32) bool {
	switch signo {
	case 4, 7, 8, 11:
		return code > 0
	}
	return false
}

// SignalNumber is the number of a signal name such as "SIGSEGV".
func SignalNumber(name string) (int, bool) {
	for n, s := range signalNames {
		if s == name {
			return n, true
		}
	}
	return 0, false
}

// Syscall is the system call a seccomp filter refused (SIGSYS with
// si_code SYS_SECCOMP: si_syscall, si_arch, si_call_addr).
type Syscall struct {
	Number int `json:"number"`
	// Name is the call's name for Arch ("getppid"), "" when unknown.
	Name string `json:"name,omitempty"`
	// Arch is the calling convention it was made with ("x86_64", "i386",
	// "aarch64"), from the AUDIT_ARCH_* value in si_arch.
	Arch string `json:"arch,omitempty"`
	// CallAddress is the address of the instruction after the syscall.
	CallAddress string `json:"callAddress,omitempty"`
}

// AUDIT_ARCH_* values (linux/audit.h).
const (
	auditArchX86_64  = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAARCH64 = 0xc00000b7
)

// NewSyscall names system call nr of the AUDIT_ARCH_* architecture arch.
func NewSyscall(nr int, arch uint32) *Syscall {
	s := &Syscall{Number: nr}
	switch arch {
	case auditArchX86_64:
		s.Arch, s.Name = "x86_64", syscallsX86_64[nr]
		if nr&0x40000000 != 0 { // __X32_SYSCALL_BIT
			s.Arch, s.Name = "x32", syscallsX86_64[nr&^0x40000000]
		}
	case auditArchI386:
		s.Arch, s.Name = "i386", syscallsI386[nr]
	case auditArchAARCH64:
		s.Arch = "aarch64"
	default:
		s.Arch = fmt.Sprintf("audit arch %#x", arch)
	}
	return s
}
