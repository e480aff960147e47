package realworld_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/classify"
	"github.com/faultline-dev/faultline/analysis/model"
)

// TestPythonAngleBracketNames: Debian's python3 crashes in a lambda called
// from a list comprehension at module level; faulthandler names those
// frames <lambda>, <listcomp> and <module>, and the signature keeps them
// (they are not C++ template arguments).
func TestPythonAngleBracketNames(t *testing.T) {
	const python = "/usr/bin/python3" // Debian's, as the README's test command installs it
	dir := t.TempDir()
	cmd := exec.Command(python, "-X", "faulthandler", filepath.Join(programs, "crash_lambda.py"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("crash_lambda.py did not crash")
	}
	log := filepath.Join(dir, "job.log")
	if err := os.WriteFile(log, []byte(stderr.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := analysis.Open(log, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, th := range c.Threads {
		if th.ID == c.CrashingThreadID {
			for _, f := range th.Frames {
				names = append(names, f.Function)
			}
		}
	}
	if strings.Join(names, ",") != "string_at,<lambda>,<listcomp>,<module>" {
		t.Fatalf("frames %q, want faulthandler's string_at, <lambda>, <listcomp>, <module>\n%s", names, stderr.String())
	}
	sig := c.Classification.Signature
	for _, p := range strings.Split(sig, " | ") {
		if strings.TrimSpace(p) == "" {
			t.Errorf("signature %q has an empty part", sig)
		}
	}
	if !strings.Contains(sig, "<lambda>") {
		t.Errorf("signature %q lost <lambda>", sig)
	}
	set := classify.GroupCrashes([]*model.Crash{c})
	if got := set.Groups[0].Culprit; !strings.HasPrefix(got, "<lambda> (crash_lambda.py:5)") {
		t.Errorf("group culprit %q, want <lambda> (crash_lambda.py:5)", got)
	}
}
