package server_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/internal/debuginfodtest"
	"github.com/faultline-dev/faultline/server"
)

// TestOfflineAsksDebuginfodNothing: "offline" in initializationOptions and
// in workspace/didChangeConfiguration (under "faultline", as VS Code sends
// it) keeps the server off the network. A program built here, its
// executable stripped and its sources moved away, Debian's debuginfod on
// 127.0.0.1 (in a private network namespace) serving both the debug file
// and the sources, and a proxy in front of it counting the requests: with
// offline the open asks nothing; turning it off reloads the dump, which
// then fetches the debug file and the source (the positive control);
// turning it on again and reopening asks nothing more.
func TestOfflineAsksDebuginfodNothing(t *testing.T) {
	if !debuginfodtest.InNetNS(t) {
		return
	}
	p := debuginfodtest.StartSourcesAway(t)
	count := p.Server.Count(t)
	t.Setenv("DEBUGINFOD_URLS", count.URL)
	stripped := filepath.Join(t.TempDir(), "crash")
	if out, err := exec.Command("strip", "--strip-debug", "-o", stripped, p.Exe).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	e := newEnvFolders(t, nil, map[string]any{"offline": true}, server.Options{})
	open := func() server.OpenSummary {
		var sum server.OpenSummary
		if err := e.Execute(server.CommandOpen, map[string]string{"dump": p.Core, "exe": stripped}, &sum); err != nil {
			t.Fatal(err)
		}
		return sum
	}
	if sum := open(); sum.Function != "crash_here" || sum.URI != "" {
		t.Errorf("offline: culprit %s at %q; want crash_here (the symbol table) with no source", sum.Function, sum.URI)
	}
	if got := count.Requests(); len(got) != 0 {
		t.Fatalf("initializationOptions offline: %d debuginfod requests: %q", len(got), got)
	}

	configure := func(offline bool) {
		raw, _ := json.Marshal(map[string]any{"faultline": map[string]any{"offline": offline}})
		if err := e.Server.DidChangeConfiguration(e.ctx, &protocol.DidChangeConfigurationParams{Settings: raw}); err != nil {
			t.Fatal(err)
		}
	}
	configure(false)
	awaitCulprit(t, e, p.Fetched)
	got := count.Requests()
	if !hasRequest(got, "/debuginfo") || !hasRequest(got, "/source") {
		t.Fatalf("online again: debuginfod requests %q; want the debug file and the source", got)
	}

	configure(true)
	open()
	if after := count.Requests(); len(after) != len(got) {
		t.Errorf("faultline.offline true again: %d more debuginfod requests: %q", len(after)-len(got), after[len(got):])
	}
}

// awaitCulprit waits for the crash's Error diagnostic on file.
func awaitCulprit(t *testing.T, e *Env, file string) protocol.Diagnostic {
	t.Helper()
	var culprit protocol.Diagnostic
	u := uri.File(file)
	e.Await("the Error diagnostic on "+file, func(c *fakeClient) bool {
		for _, d := range c.diags[u] {
			if d.Severity == protocol.DiagnosticSeverityError {
				culprit = d
				return true
			}
		}
		return false
	})
	return culprit
}

func hasRequest(paths []string, part string) bool {
	for _, p := range paths {
		if strings.Contains(p, part) {
			return true
		}
	}
	return false
}
