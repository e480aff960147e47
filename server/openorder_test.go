package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/server"
)

// TestLatestOpenWins sends two faultline.open within milliseconds, the
// first held before it loads (its window/workDoneProgress/create is not
// answered until the second is done): the second is the one shown, the
// first answers RequestCancelled, and nothing of the first is published
// after the second.
func TestLatestOpenWins(t *testing.T) {
	e := newEnv(t, map[string]any{}, server.Options{})
	gate := make(chan struct{})
	e.Client.mu.Lock()
	e.Client.createGate = gate
	e.Client.mu.Unlock()
	first := make(chan error, 1)
	go func() {
		first <- e.Execute(server.CommandOpen, map[string]string{
			"dump": e.Path("cores/threads64.core.gz"), "exe": e.Path("bin/threads64")}, nil)
	}()
	e.Await("the first open's progress token", func(c *fakeClient) bool { return c.created == 1 })
	e.Client.mu.Lock()
	e.Client.createGate = nil
	e.Client.mu.Unlock()

	sum := e.OpenDump("null_inline")
	e.Client.mu.Lock()
	published := len(e.Client.diagLog)
	e.Client.mu.Unlock()
	close(gate)
	err := <-first
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != protocol.CodeRequestCancelled || !strings.Contains(je.Message, "later faultline.open") {
		t.Errorf("the earlier open answered %v, want RequestCancelled", err)
	}
	res, _, err := e.threadsPage(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(res.Dump, "null_inline.core.gz") || sum.Function != "value_of" {
		t.Errorf("shown dump %s, want the later one (null_inline)", res.Dump)
	}
	e.Client.mu.Lock()
	after := append([]string(nil), fmt.Sprint(e.Client.diagLog[published:]))
	e.Client.mu.Unlock()
	if strings.Contains(after[0], "threads64.c") {
		t.Errorf("the earlier open published after the later one: %v", after)
	}
	if d := e.Diagnostics(e.URI("threads64.c")); len(d) != 0 {
		t.Errorf("threads64.c has %d diagnostics", len(d))
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}

// TestCancelFromProgress cancels a load from its progress notification
// (window/workDoneProgress/cancel, what VS Code's Cancel button sends): the
// open answers RequestCancelled (-32800, which clients do not show), not
// RequestFailed (-32803, an Error popup), and no Error message is shown.
func TestCancelFromProgress(t *testing.T) {
	e := newEnv(t, map[string]any{}, server.Options{})
	done := make(chan error, 1)
	go func() {
		done <- e.Execute(server.CommandOpen, map[string]string{
			"dump": e.Path("cores/recursion.core.gz"), "exe": e.Path("bin/recursion")}, nil)
	}()
	var token string
	e.Await("the open's progress begin", func(c *fakeClient) bool {
		for tok, kinds := range c.progress {
			if len(kinds) > 0 && kinds[0] == "begin" {
				token = tok
				return true
			}
		}
		return false
	})
	if err := e.Server.WorkDoneProgressCancel(e.ctx, &protocol.WorkDoneProgressCancelParams{Token: protocol.String(token)}); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != protocol.CodeRequestCancelled {
		t.Errorf("open cancelled from its progress answered %v, want RequestCancelled (-32800)", err)
	}
	e.Client.mu.Lock()
	for _, m := range e.Client.messages {
		if m.Type == protocol.MessageTypeError {
			t.Errorf("an Error message after a cancel: %q", m.Message)
		}
	}
	e.Client.mu.Unlock()
	res, _, _ := e.threadsPage(nil)
	if len(res.Threads) != 0 {
		t.Errorf("a cancelled open is shown: %s", res.Dump)
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}

// TestLensRefreshAfterDiagnostics: every publish of the culprit file's
// diagnostics (the crashing thread first, then the whole crash) is
// followed by workspace/codeLens/refresh, and the lenses then answered
// match the diagnostics.
func TestLensRefreshAfterDiagnostics(t *testing.T) {
	e := newEnv(t, map[string]any{}, server.Options{})
	e.OpenDump("threads64")
	src := string(e.URI("threads64.c"))
	e.Await("a lens refresh after each publish of threads64.c", func(c *fakeClient) bool {
		pending := 0
		for _, ev := range c.events {
			switch {
			case ev == "diagnostics:"+src:
				pending++
			case ev == "codeLensRefresh" && pending > 0:
				pending--
			}
		}
		return pending == 0
	})
	e.Client.mu.Lock()
	events := strings.Join(e.Client.events, "\n")
	e.Client.mu.Unlock()
	if strings.Count(events, "diagnostics:"+src) < 2 {
		t.Errorf("want the crashing thread's diagnostics published before the whole crash's; events:\n%s", events)
	}
	lenses, err := e.Server.CodeLens(e.ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: e.URI("threads64.c")}})
	if err != nil || len(lenses) == 0 {
		t.Errorf("lenses after the refresh: %v %v", lenses, err)
	}
	b, _ := json.Marshal(lenses)
	if !strings.Contains(string(b), "⚡") {
		t.Errorf("no culprit lens: %s", b)
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}
