package realworld_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestDebianPerl crashes Debian's perl: unpack "p" turns the number 8 into
// a string pointer, which strlen reads → null-deref in Perl_newSVpv (the
// first frame past libc's strlen), the frames equal gdb's.
func TestDebianPerl(t *testing.T) {
	perl := debianProgram(t, "/usr/bin/perl")
	core, _ := crashlab.Crash(t, t.TempDir(), "", perl, "-e", `my $x = unpack("p", pack("Q", 8)); print $x`)
	c := openWithin(t, core, analysis.Options{Exe: perl, Offline: true}, time.Minute)
	cls := c.Classification
	if cls.Kind != model.KindNullDeref || culprit(c) != "Perl_newSVpv" {
		t.Errorf("kind %s, culprit %q; want null-deref in Perl_newSVpv:\n%s", cls.Kind, culprit(c), strings.Join(cls.Evidence, "\n"))
	}
	if d := crashlab.CompareWithGDB(crashlab.GDB(t, perl, core), c); d != "" {
		t.Errorf("frames differ from gdb:\n%s", d)
	}
}

// TestDebianGDBKilled: Debian's gdb, running Python in its embedded
// interpreter, killed with SIGSEGV. gdb's own SIGSEGV handler prints its
// "Fatal signal" backtrace and re-raises the signal (without SA_SIGINFO,
// so the sender is not recorded): kind killed, not a fault, and every
// thread's native frames equal gdb's (faultline interleaves the Python
// frame <module>, which gdb does not show).
func TestDebianGDBKilled(t *testing.T) {
	gdb := debianProgram(t, "/usr/bin/gdb")
	s := crashlab.Start(t, t.TempDir(), "ready", gdb, "-nx", "-batch", "-ex",
		`python import time; print("ready", flush=True); time.sleep(60)`)
	if out, err := exec.Command("kill", "-SEGV", itoa(s.Pid())).CombinedOutput(); err != nil {
		t.Fatalf("kill: %v %s", err, out)
	}
	core := s.WaitCore(t)
	c := openWithin(t, core, analysis.Options{Exe: gdb, Offline: true}, time.Minute)
	cls := c.Classification
	if cls.Kind != model.KindKilled || !cls.Reraised || !strings.HasPrefix(cls.Signature, "killed by SIGSEGV") {
		t.Errorf("kind %s, reraised %v, signature %q; want killed by SIGSEGV through gdb's handler", cls.Kind, cls.Reraised, cls.Signature)
	}
	if th := c.CrashingThread(); th == nil || !strings.Contains(fmt.Sprint(crashlab.ModelLines(*th)), "<module> at <string>:1") {
		t.Errorf("no Python frame <module> on the crashing thread")
	}
	if d := crashlab.CompareWithGDB(crashlab.GDB(t, gdb, core), nativeOnly(c)); d != "" {
		t.Errorf("frames differ from gdb:\n%s", d)
	}
}
