package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
)

// TestDemo runs the README's main job: the bundled crash, analyzed.
func TestDemo(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"demo"}, &out, &errOut); code != 0 {
		t.Fatalf("demo exited %d: %s", code, errOut.String())
	}
	report := out.String()
	for _, want := range []string{"SIGSEGV", "null-deref", "record_timeout", "demo.c:"} {
		if !strings.Contains(report, want) {
			t.Errorf("demo report lacks %q:\n%s", want, report)
		}
	}

	out.Reset()
	if code := run([]string{"demo", "--json"}, &out, &errOut); code != 0 {
		t.Fatalf("demo --json exited %d: %s", code, errOut.String())
	}
	var c analysis.Crash
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatal(err)
	}
	if c.Schema != "faultline.crash/v1" || c.Signal == nil || c.Signal.Name != "SIGSEGV" {
		t.Fatalf("demo model: schema %q signal %+v", c.Schema, c.Signal)
	}
	if len(c.Threads) == 0 || len(c.Threads[0].Frames) == 0 || c.Threads[0].Frames[0].File != "demo.c" {
		t.Fatalf("demo's crashing frame is not in demo.c: %+v", c.Threads)
	}
	if len(c.Problems) != 0 {
		t.Errorf("the bundled crash should analyze cleanly, problems: %+v", c.Problems)
	}
}

func TestUsageErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"analyze"}, &out, &errOut); code != 2 {
		t.Errorf("analyze without a dump: exit %d", code)
	}
	if code := run([]string{"nonsense"}, &out, &errOut); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
	errOut.Reset()
	if code := run([]string{"analyze", "/nonexistent/core"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "/nonexistent/core") {
		t.Errorf("missing file: exit %d, %q", code, errOut.String())
	}
}
