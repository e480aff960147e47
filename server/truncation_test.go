package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/internal/testgz"
	"github.com/faultline-dev/faultline/server"
)

// TestTruncatedCoreWarning opens null_inline's core cut to 200,000 of its
// 557,056 bytes (as RLIMIT_CORE or a full disk leave one): the open
// succeeds with what is there, a Warning (window/showMessage) says the
// core is truncated, and the report lists the problem; a whole core shows
// no such warning.
func TestTruncatedCoreWarning(t *testing.T) {
	e := newEnv(t, map[string]any{"cacheDir": t.TempDir()}, server.Options{})
	e.OpenDump("null_inline")
	full := filepath.Join(t.TempDir(), "null_inline.core")
	testgz.Gunzip(t, e.Path("cores/null_inline.core.gz"), full)
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.core")
	if err := os.WriteFile(cut, data[:200000], 0o644); err != nil {
		t.Fatal(err)
	}
	var sum server.OpenSummary
	if err := e.Execute(server.CommandOpen, map[string]string{"dump": cut, "exe": e.Path("bin/null_inline")}, &sum); err != nil {
		t.Fatalf("open of the truncated core: %v", err)
	}
	var warnings []string
	e.Await("the truncation warning", func(c *fakeClient) bool {
		warnings = warnings[:0]
		for _, m := range c.messages {
			if m.Type == protocol.MessageTypeWarning && strings.Contains(m.Message, "the core is truncated") {
				warnings = append(warnings, m.Message)
			}
		}
		return len(warnings) > 0
	})
	if len(warnings) != 1 || !strings.Contains(warnings[0], "cut.core is incomplete") || !strings.Contains(warnings[0], "195.3 KiB of 544.0 KiB") {
		t.Errorf("warnings: %q", warnings)
	}
	if sum.Problems == 0 {
		t.Errorf("open summary counts no problem: %+v", sum)
	}
	var rep map[string]string
	if err := e.Execute(server.CommandReport, map[string]any{}, &rep); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(rep["path"])
	if err != nil || !strings.Contains(string(text), "Problems while reading the dump") || !strings.Contains(string(text), "the core is truncated") {
		t.Errorf("report %s lacks the truncation problem: %v\n%s", rep["path"], err, text)
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}
