package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/faultline-dev/faultline/analysis/model"
)

// exitMeaning is what a signal usually means when it ends a process.
var exitMeaning = map[int]string{
	1:  "the terminal or session went away (hangup), or a supervisor asked it to reload",
	2:  "interrupted from the keyboard (Ctrl-C)",
	3:  "quit from the keyboard (Ctrl-\\) or a watchdog asking for a core dump",
	4:  "illegal instruction: a CPU-feature mismatch (binary built for a newer -march, AVX-512) or a deliberate trap (__builtin_trap, ud2)",
	5:  "trace/breakpoint trap: an int3 compiled into the program, or a debugger's breakpoint without a debugger",
	6:  "abort: a failed assert(), glibc's heap checks (double free, corrupted chunks), an uncaught C++ exception (std::terminate), or an explicit abort()",
	7:  "bus error: an access to a memory-mapped file past its end (truncated while mapped), exhausted /dev/shm or hugetlbfs, a misaligned access, or a smashed stack frame",
	8:  "arithmetic exception: integer division by zero (or INT_MIN / -1)",
	9:  "killed with SIGKILL: the kernel's OOM killer, a cgroup memory limit, a scheduler's timeout (Slurm, Kubernetes), or kill -9",
	10: "SIGUSR1 with no handler installed: a launcher, profiler or monitoring agent sent it to a program that does not expect it",
	11: "segmentation fault: an invalid memory access (NULL, freed or corrupted pointer, stack overflow)",
	13: "broken pipe: it wrote to a pipe or socket whose reader had gone (e.g. `prog | head`)",
	14: "alarm clock: an alarm() or timer it set expired with no handler",
	15: "terminated: asked to stop (kill, a timeout, a scheduler's preemption, docker stop)",
	24: "CPU time limit exceeded (ulimit -t, RLIMIT_CPU)",
	25: "file size limit exceeded (ulimit -f, RLIMIT_FSIZE)",
	31: "bad system call: blocked by a seccomp filter (container runtime profile)",
}

var explainExitCommand = &command{
	name:  "explain-exit",
	args:  "CODE",
	short: "what a shell exit status means (139, 134, 137, ...)",
	long: `Explain-exit says what a shell exit status means: 128+N is "killed by signal N"
(POSIX sh, "Exit Status"), with what that signal usually means; for 137 it looks
for the OOM killer in the kernel log.`,
	examples: []string{"faultline explain-exit 139", "faultline explain-exit 137"},
	new:      func() runner { return explainExitRun{} },
}

// explainExitRun is one `faultline explain-exit`.
type explainExitRun struct{}

func (explainExitRun) flags(*flag.FlagSet) {}

func (explainExitRun) run(args []string, stdout, _ io.Writer) error {
	return explainExit(args, stdout)
}

// explainExit explains a shell exit status.
func explainExit(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return usageError{errors.New("expected one exit code, e.g. 139")}
	}
	code, err := strconv.Atoi(strings.TrimSpace(args[0]))
	if err != nil || code < 0 || code > 255 {
		return usageError{fmt.Errorf("%q is not an exit code (0-255)", args[0])}
	}
	explainStatus(stdout, code, true)
	return nil
}

// explainStatus explains exit status code; coreHint adds where a core dump
// the signal may have left is found (faultline run, which found it, says
// where it is instead).
func explainStatus(stdout io.Writer, code int, coreHint bool) {
	w := func(format string, a ...any) { fmt.Fprintf(stdout, format, a...) }
	switch {
	case code == 0:
		w("exit 0: success.\n")
	case code == 126:
		w("exit 126: the command was found but could not be executed (not executable, or a bad interpreter line).\n")
	case code == 127:
		w("exit 127: command not found (check PATH, or a missing shared library's loader error above it).\n")
	case code > 128 && code-128 < 65:
		sig := code - 128
		w("exit %d = 128 + %d: the process was killed by signal %d, %s (%s).\n", code, sig, sig,
			model.SignalName(sig), model.SignalDescription(sig))
		if m, ok := exitMeaning[sig]; ok {
			w("Usually: %s.\n", m)
		}
		if sig == 10 {
			w("Note: on x86-64 and ARM Linux SIGBUS is 7 (exit 135); 138 is a bus error only where SIGBUS is 10 (MIPS, SPARC, Alpha).\n")
		}
		switch sig {
		case 4, 5, 6, 7, 8, 11:
			if !coreHint {
				break
			}
			w("It may have left a core dump: see `cat /proc/sys/kernel/core_pattern` (and `coredumpctl list` with systemd-coredump; `ulimit -c unlimited` first), then run `faultline analyze CORE`.\n")
		case 9:
			oomCheck(w)
		}
	case code > 128:
		w("exit %d: above 128 but not a signal number; the program chose this status itself.\n", code)
	default:
		w("exit %d: the program exited normally with status %d (its own error code, not a crash).\n", code, code)
		if code == 1 || code == 2 {
			w("By convention 1 is a general error and 2 a usage error.\n")
		}
	}
}

// oomCheck looks for the OOM killer: the kernel log ("Out of memory:
// Killed process", "oom-kill:") and cgroup v2's memory.events oom_kill count.
func oomCheck(w func(string, ...any)) {
	w("OOM-killer check on this machine:\n")
	found := false
	if lines, err := kernelLogOOM(); err != nil {
		w("  - kernel log: not readable here (%v); run `sudo dmesg -T | grep -iE 'out of memory|oom-kill'` on the machine that ran it\n", err)
	} else if len(lines) == 0 {
		w("  - kernel log: no OOM-killer messages\n")
	} else {
		found = true
		w("  - kernel log: %d OOM-killer message(s), the last:\n", len(lines))
		for _, l := range lines[max(0, len(lines)-3):] {
			w("      %s\n", l)
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.events"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "oom_kill" {
				w("  - this cgroup's memory.events: oom_kill %s\n", f[1])
				if f[1] != "0" {
					found = true
				}
			}
		}
	}
	if found {
		w("The OOM killer has been active: the process most likely ran out of memory (or hit its cgroup/container limit).\n")
	} else {
		w("No OOM kill seen here; if it ran elsewhere (a container, a cluster node), check that machine's kernel log and the scheduler's accounting (e.g. `sacct -j JOB -o State,MaxRSS`).\n")
	}
}

// kernelLogOOM reads the kernel ring buffer from /dev/kmsg without blocking
// and returns the OOM-killer lines.
func kernelLogOOM() ([]string, error) {
	// A raw non-blocking descriptor: os.File would park a read on the
	// poller, which never reports /dev/kmsg's end.
	fd, err := syscall.Open("/dev/kmsg", syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var out []string
	buf := make([]byte, 8192)
	for i := 0; i < 1<<20; i++ {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EPIPE { // a record was overwritten while reading: go on
			continue
		}
		if err == syscall.EAGAIN || n <= 0 {
			break
		}
		if err != nil {
			return out, err
		}
		// One record per read: "<prio>,<seq>,<usec>,<flags>;message\n"
		// (Documentation/ABI/testing/dev-kmsg).
		rec := string(buf[:n])
		if j := strings.IndexByte(rec, ';'); j >= 0 {
			rec = rec[j+1:]
		}
		rec = strings.TrimSpace(strings.SplitN(rec, "\n", 2)[0])
		low := strings.ToLower(rec)
		if strings.Contains(low, "out of memory") || strings.Contains(low, "oom-kill") || strings.Contains(low, "killed process") {
			out = append(out, rec)
		}
	}
	return out, nil
}
