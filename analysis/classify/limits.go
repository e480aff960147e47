package classify

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/model"
)

// Signals the kernel raises for a policy, not a fault: SIGSYS when a
// seccomp filter refuses a system call (si_code SYS_SECCOMP, with the
// call's number and architecture in si_syscall and si_arch), SIGXCPU when
// the CPU-time limit passes (RLIMIT_CPU), SIGXFSZ when a write passes the
// file-size limit (RLIMIT_FSIZE; the kernel sends it as SI_USER from the
// writing process itself).

// policySignal classifies SIGSYS, SIGXCPU and SIGXFSZ the kernel raised,
// and reports whether f was one.
func (a *analyzer) policySignal(f *fault) bool {
	switch {
	case f.signo == sigSYS && a.c.Signal != nil && a.c.Signal.Syscall != nil:
		a.forbiddenSyscall(f, a.c.Signal.Syscall)
	case (f.signo == sigXCPU || f.signo == sigXFSZ) && (!f.sent || a.sentByItself(f)):
		a.resourceLimit(f)
	default:
		return false
	}
	return true
}

func (a *analyzer) forbiddenSyscall(f *fault, s *model.Syscall) {
	a.cls.Kind = model.KindForbiddenSyscall
	name := syscallLabel(s)
	a.evidence("%s with si_code %s: a seccomp filter refused system call %d (%s) of arch %s, made at %s (si_call_addr)",
		f.name, f.code, s.Number, orDefault(s.Name, "no name known"), orDefault(s.Arch, "unknown"), orDefault(s.CallAddress, "an unknown address"))
	a.cls.Summary = fmt.Sprintf("Forbidden system call: the process's seccomp filter refused %s, made from %s; allow it in the filter (the sandbox's or container's profile) or avoid the call.", name, a.where())
}

// syscallLabel is "getppid (x86_64 system call 110)".
func syscallLabel(s *model.Syscall) string {
	if s.Name == "" {
		return fmt.Sprintf("%s system call %d", orDefault(s.Arch, "the"), s.Number)
	}
	return fmt.Sprintf("%s (%s system call %d)", s.Name, s.Arch, s.Number)
}

func (a *analyzer) resourceLimit(f *fault) {
	a.cls.Kind = model.KindResourceLimit
	if f.signo == sigXCPU {
		a.evidence("%s%s: the kernel signals the CPU-time limit (RLIMIT_CPU, `ulimit -t`) when the process's CPU time passes its soft limit", f.name, parenthesized(f.code))
		a.cls.Summary = fmt.Sprintf("CPU time limit exceeded: the process used up its CPU-time limit (RLIMIT_CPU, `ulimit -t`, or a batch system's limit) while in %s; the stack shows where it was when the limit passed, not a fault.", a.where())
		return
	}
	a.evidence("%s%s from the process's own pid: the kernel sends it to a process whose write passes the file-size limit (RLIMIT_FSIZE, `ulimit -f`); the write itself fails with EFBIG", f.name, parenthesized(f.code))
	a.cls.Summary = fmt.Sprintf("File size limit exceeded: %s wrote past the file-size limit (RLIMIT_FSIZE, `ulimit -f`); raise the limit or bound the file (a core larger than the limit is cut at it too).", a.where())
}
