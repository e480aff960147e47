package realworld_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/report"
)

// pauseSyscall is pause(2)'s number on x86-64.
const pauseSyscall = 34

// killSleeper starts the sleeper (with the handler mode, "" for none),
// sends it sig the sender's way (kill, tgkill, sigqueue) and returns the
// sleeper's binary, its core and the sender's pid.
func killSleeper(t *testing.T, mode, how string, sig syscall.Signal) (bin, core string, sender int) {
	t.Helper()
	bin = buildOnce(t, "sleeper", "gcc", []string{"sleeper.c"}, "-O1", "-g")
	send := buildOnce(t, "sender", "gcc", []string{"sender.c"}, "-O1")
	dir := t.TempDir()
	argv := []string{bin}
	if mode != "" {
		argv = append(argv, mode)
	}
	s := crashlab.Start(t, dir, "ready", argv...)
	s.WaitInSyscall(t, pauseSyscall)
	cmd := exec.Command(send, how, fmt.Sprint(s.Pid()), fmt.Sprint(int(sig)))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sender: %v\n%s", err, out)
	}
	return bin, s.WaitCore(t), cmd.Process.Pid
}

// TestSignalsSentByKill: a sleeping program killed with a fault signal is
// `killed`, naming the sender's pid and uid, with no faulting-instruction
// analysis; its stack is where it slept (gdb's, frame for frame).
func TestSignalsSentByKill(t *testing.T) {
	// Each fault signal once, the three ways of sending taken in turn, and
	// SIGSEGV all three ways.
	type send struct {
		how, code string
		sig       syscall.Signal
	}
	cases := []send{{"kill", "SI_USER", syscall.SIGSEGV}, {"tgkill", "SI_TKILL", syscall.SIGSEGV},
		{"sigqueue", "SI_QUEUE", syscall.SIGSEGV}, {"kill", "SI_USER", syscall.SIGBUS},
		{"tgkill", "SI_TKILL", syscall.SIGFPE}, {"sigqueue", "SI_QUEUE", syscall.SIGILL}, {"kill", "SI_USER", syscall.SIGTRAP}}
	for i, tc := range cases {
		{
			how, code, sig := tc.how, tc.code, tc.sig
			checkGDB := i%3 == 0 // gdb on a sample: the stacks are alike
			t.Run(fmt.Sprintf("%s-%s", how, model.SignalName(int(sig))), func(t *testing.T) {
				bin, core, sender := killSleeper(t, "", how, sig)
				c, err := analysis.Open(core, analysis.Options{Exe: bin})
				if err != nil {
					t.Fatal(err)
				}
				if c.Signal == nil || c.Signal.Number != int(sig) || c.Signal.Code != code {
					t.Fatalf("signal %+v, want %d %s", c.Signal, sig, code)
				}
				checkKilled(t, c, sender, true)
				checkKilledReport(t, c)
				if checkGDB {
					if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
						t.Errorf("frames differ from gdb:\n%s", d)
					}
				}
			})
		}
	}
}

// TestSentSignalReraisedByHandler: a handler that catches a sent signal and
// raises it again (LLVM's with SA_SIGINFO, faulthandler's without) leaves a
// signal frame whose trapno is 0; that must not be read as a divide error.
// One that raises it and returns (Open MPI's, R's) leaves its signal frame
// below the stack pointer: a `kill -ABRT` is "killed" by the sender the
// frame names, not "called abort()".
func TestSentSignalReraisedByHandler(t *testing.T) {
	for _, tc := range []struct {
		mode       string
		sig        syscall.Signal
		knowSender bool
	}{
		{"siginfo", syscall.SIGSEGV, true},
		{"siginfo", syscall.SIGBUS, true},
		{"plain", syscall.SIGSEGV, false},
		{"plain", syscall.SIGILL, false},
		// Open MPI's and R's handlers raise the signal and return: the
		// signal is delivered again where the process slept, with no
		// handler frame and no abort() on the stack.
		{"return", syscall.SIGABRT, true},
		{"return", syscall.SIGSEGV, true},
	} {
		t.Run(tc.mode+"-"+model.SignalName(int(tc.sig)), func(t *testing.T) {
			bin, core, sender := killSleeper(t, tc.mode, "kill", tc.sig)
			c, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			if c.Signal == nil || c.Signal.Number != int(tc.sig) {
				t.Fatalf("signal %+v, want %d", c.Signal, tc.sig)
			}
			if !c.Classification.Reraised {
				t.Errorf("not marked re-raised: %+v", c.Classification)
			}
			checkKilled(t, c, sender, tc.knowSender)
			for _, e := range c.Classification.Evidence {
				if strings.Contains(e, "SIGFPE") && tc.sig != syscall.SIGFPE {
					t.Errorf("evidence invents a SIGFPE: %q", e)
				}
			}
			if strings.Contains(c.Classification.Summary, "abort()") {
				t.Errorf("summary %q", c.Classification.Summary)
			}
			if tc.mode != "plain" {
				if d := crashlab.CompareWithGDB(crashlab.GDB(t, bin, core), c); d != "" {
					t.Errorf("frames differ from gdb:\n%s", d)
				}
			}
		})
	}
}

// checkKilled asserts the classification of a sent signal.
func checkKilled(t *testing.T, c *model.Crash, sender int, knowSender bool) {
	t.Helper()
	cls := c.Classification
	if cls.Kind != model.KindKilled {
		t.Fatalf("kind %s, want %s; summary %q; evidence %q", cls.Kind, model.KindKilled, cls.Summary, cls.Evidence)
	}
	if knowSender {
		want := fmt.Sprintf("pid %d", sender)
		if !strings.Contains(cls.Summary, want) || !strings.Contains(cls.Summary, fmt.Sprintf("uid %d", os.Getuid())) {
			t.Errorf("summary %q does not name the sender (%s, uid %d)", cls.Summary, want, os.Getuid())
		}
	}
	for _, e := range cls.Evidence {
		if strings.Contains(e, "faulting instruction") || strings.Contains(e, "effective address") {
			t.Errorf("a sent signal got faulting-instruction analysis: %q", e)
		}
	}
	if fn := culprit(c); fn != "wait_for_work" {
		t.Errorf("culprit %q, want wait_for_work (where the process was)", fn)
	}
	if strings.Contains(cls.Signature, "0x") {
		t.Errorf("signature %q contains an address", cls.Signature)
	}
}

// culprit is the culprit frame's function.
func culprit(c *model.Crash) string {
	cls := c.Classification
	for _, th := range c.Threads {
		if th.ID == c.CrashingThreadID && cls.CulpritFrame >= 0 && cls.CulpritFrame < len(th.Frames) {
			return th.Frames[cls.CulpritFrame].Function
		}
	}
	return ""
}

// checkKilledReport: the markdown report names the sender's uid and does
// not present the instruction the thread was at as a faulting one.
func checkKilledReport(t *testing.T, c *model.Crash) {
	t.Helper()
	var b strings.Builder
	if err := report.Markdown(&b, c, ""); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{fmt.Sprintf("(uid %d)", os.Getuid()), "None: the signal was sent", "Find what sent the signal"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown report lacks %q:\n%s", want, md)
		}
	}
}
