package realworld_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/classify"
	"github.com/faultline-dev/faultline/analysis/internal/crashlab"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestGDBLogMatchesCore: gdb's `bt` of a core, analyzed as a log, gets the
// signature of the core itself (glibc's frames, which gdb names by their
// source files and no module, are runtime frames there too), and the two
// group as one program and one crash; the log's kind says what it cannot
// tell (no fault address), with evidence. A call through a NULL function
// pointer is read from the log alone (frame #0 at pc 0).
func TestGDBLogMatchesCore(t *testing.T) {
	bin := cachedBuild(t, "kinds", []string{"kinds.c"}, "gcc", "-O1", "-g", "-o", "$OUT", "kinds.c")
	for _, tc := range []struct {
		mode, logKind, culprit, summary string
	}{
		{"wildstr", model.KindUnknown, "item_len", "the fault address is not recorded here"},
		{"nullfn", model.KindNullDeref, "dispatch", "Call through a NULL function pointer in dispatch (kinds.c:"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			dir := t.TempDir()
			core, _ := crashlab.Crash(t, dir, "", bin, tc.mode)
			out, err := exec.Command("gdb", "-batch", "-nx", "-ex", "set pagination off", "-ex", "bt", bin, core).CombinedOutput()
			if err != nil {
				t.Fatalf("gdb: %v\n%s", err, out)
			}
			logPath := filepath.Join(dir, "gdbbt.txt")
			if err := os.WriteFile(logPath, out, 0o644); err != nil {
				t.Fatal(err)
			}
			fromCore, err := analysis.Open(core, analysis.Options{Exe: bin})
			if err != nil {
				t.Fatal(err)
			}
			fromLog, err := analysis.Open(logPath, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			lc, cc := fromLog.Classification, fromCore.Classification
			if lc.Signature != cc.Signature {
				t.Errorf("the log's signature %q differs from the core's %q", lc.Signature, cc.Signature)
			}
			if lc.Kind != tc.logKind || culprit(fromLog) != tc.culprit || !strings.Contains(lc.Summary, tc.summary) || len(lc.Evidence) == 0 {
				t.Errorf("log: kind %s, culprit %q, summary %q, evidence %q; want %s in %s, %q", lc.Kind, culprit(fromLog), lc.Summary,
					lc.Evidence, tc.logKind, tc.culprit, tc.summary)
			}
			if strings.Contains(lc.Summary, "(unknown)") {
				t.Errorf("summary %q", lc.Summary)
			}
			set := classify.GroupCrashes([]*model.Crash{fromCore, fromLog})
			if len(set.Groups) != 1 || len(set.Programs) != 0 {
				t.Errorf("the core and its gdb log make %d groups of %d programs (%q), want one", len(set.Groups), len(set.Programs), set.Programs)
			}
		})
	}
}
