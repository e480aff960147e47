package server_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/server"
)

// TestThreads64 opens the 65-thread core: the crashing thread's
// diagnostics come before loading ends, lines where many workers wait get
// "N threads here" lenses, and selecting another thread moves the
// diagnostics to its stack.
func TestThreads64(t *testing.T) {
	e := newEnv(t, map[string]any{}, server.Options{})
	sum := e.OpenDump("threads64")
	src := e.URI("threads64.c")
	if sum.Threads != 65 || sum.Function != "finish_job" || sum.Line != 68 {
		t.Fatalf("open summary = %+v", sum)
	}

	// The crashing thread was published while the other threads were
	// still being unwound: before the progress ended.
	e.Await("progress end", func(c *fakeClient) bool {
		for _, ev := range c.events {
			if strings.HasSuffix(ev, ":end") {
				return true
			}
		}
		return false
	})
	e.Client.mu.Lock()
	firstDiag, end := -1, -1
	for i, ev := range e.Client.events {
		if firstDiag < 0 && ev == "diagnostics:"+string(src) {
			firstDiag = i
		}
		if strings.HasSuffix(ev, ":end") {
			end = i
		}
	}
	e.Client.mu.Unlock()
	if firstDiag < 0 || firstDiag > end {
		t.Errorf("first diagnostics at event %d, progress end at %d: the crashing thread was not published first", firstDiag, end)
	}

	lenses, err := e.Server.CodeLens(e.ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: src}})
	if err != nil {
		t.Fatal(err)
	}
	// Line 30: pthread_cond_wait in wait_for_work, where 16 workers of
	// one chain and the workers of the extra-level chain wait.
	here := regexp.MustCompile(`^(\d+) threads here$`)
	var lens30 *protocol.CodeLens
	for i, l := range lenses {
		if l.Range.Start.Line == 29 && here.MatchString(l.Command.Title) {
			lens30 = &lenses[i]
		}
	}
	if lens30 == nil {
		t.Fatalf("no \"N threads here\" lens on line 30; lenses: %s", lensTitles(lenses, 29))
	}
	if n, _ := strconv.Atoi(here.FindStringSubmatch(lens30.Command.Title)[1]); n < 2 {
		t.Errorf("lens %q", lens30.Command.Title)
	}
	var arg map[string]int
	json.Unmarshal(lens30.Command.Arguments[0], &arg)
	var sel server.OpenSummary
	if err := e.Execute(lens30.Command.Command, arg, &sel); err != nil {
		t.Fatal(err)
	}
	if sel.Thread != arg["thread"] || sel.Thread == sum.Thread {
		t.Fatalf("selectThread %v → %+v", arg, sel)
	}
	want := fmt.Sprintf("of thread %d: ", sel.Thread)
	e.Await("diagnostics of the selected thread", func(c *fakeClient) bool {
		ds := c.diags[src]
		for _, d := range ds {
			if d.Severity == protocol.DiagnosticSeverityError {
				return false
			}
		}
		return len(ds) > 0 && strings.Contains(message(ds[0]), want)
	})
	var waits bool
	for _, d := range e.Diagnostics(src) {
		if d.Range.Start.Line == 29 && strings.Contains(message(d), "called ___pthread_cond_wait") {
			waits = true
		}
	}
	if !waits {
		t.Errorf("no diagnostic for the selected worker's pthread_cond_wait call: %+v", e.Diagnostics(src))
	}
	if err := e.Execute(server.CommandSelectThread, map[string]int{"thread": 1}, nil); err == nil {
		t.Error("selecting a thread that does not exist succeeded")
	}
	var closed map[string]bool
	if err := e.Execute(server.CommandClose, map[string]any{}, &closed); err != nil || !closed["closed"] {
		t.Errorf("close: %v %v", closed, err)
	}
	e.Await("diagnostics cleared by close", func(c *fakeClient) bool { return len(c.diags[src]) == 0 })
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}

// TestInitializationDumps: dumps named in initializationOptions are opened
// after initialized; glibc's frames whose sources are not here are
// summarised in one Information message.
func TestInitializationDumps(t *testing.T) {
	dir := testdataDir(t)
	e := newEnv(t, map[string]any{"dumps": []any{
		map[string]string{"dump": dir + "/cores/assert_abort.core.gz", "exe": dir + "/bin/assert_abort"},
	}}, server.Options{})
	src := e.URI("assert_abort.c")
	e.Await("diagnostics on assert_abort.c", func(c *fakeClient) bool { return len(c.diags[src]) == 2 })
	e.Await("the unresolved-sources message", func(c *fakeClient) bool {
		for _, m := range c.messages {
			if m.Type == protocol.MessageTypeInfo && strings.Contains(m.Message, "libc.so.6 (") &&
				strings.Contains(m.Message, "raise.c") {
				return true
			}
		}
		return false
	})
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}
