package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestExplainExit(t *testing.T) {
	for code, want := range map[string][]string{
		"139": {"128 + 11", "SIGSEGV", "core dump"},
		"134": {"128 + 6", "SIGABRT", "assert()"},
		"136": {"128 + 8", "SIGFPE", "division by zero"},
		"137": {"128 + 9", "SIGKILL", "OOM-killer check"},
		"138": {"128 + 10", "SIGUSR1", "SIGBUS is 7"},
		"1":   {"exited normally with status 1"},
	} {
		var out, errOut bytes.Buffer
		if rc := run([]string{"explain-exit", code}, &out, &errOut); rc != 0 {
			t.Fatalf("explain-exit %s: exit %d: %s", code, rc, errOut.String())
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("explain-exit %s lacks %q:\n%s", code, w, out.String())
			}
		}
	}
	var out, errOut bytes.Buffer
	if rc := run([]string{"explain-exit", "banana"}, &out, &errOut); rc != 2 {
		t.Errorf("explain-exit banana: exit %d, want a usage error", rc)
	}
}
