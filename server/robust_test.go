package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/internal/lspframe"
	"github.com/faultline-dev/faultline/server"
)

// rawClient writes and reads LSP frames by hand, to send what a library
// client would refuse to.
type rawClient struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
	// seen are the notifications and requests from the server, in order.
	seen []map[string]any
}

func (c *rawClient) send(body string) {
	c.t.Helper()
	c.conn.SetWriteDeadline(time.Now().Add(awaitTimeout))
	if err := lspframe.Write(c.conn, []byte(body)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *rawClient) readFrame() map[string]any {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(awaitTimeout))
	body, err := lspframe.Read(c.r)
	if err != nil {
		c.t.Fatalf("read frame: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		c.t.Fatalf("server sent invalid JSON %q: %v", body, err)
	}
	return m
}

// response reads frames until the response with id (a JSON literal: 1,
// null); server-initiated messages on the way are kept in seen.
func (c *rawClient) response(id string) map[string]any {
	c.t.Helper()
	for {
		m := c.readFrame()
		if _, isMsg := m["method"]; isMsg {
			c.seen = append(c.seen, m)
			continue
		}
		got, _ := json.Marshal(m["id"])
		if string(got) == id {
			return m
		}
		c.t.Logf("skipping response %v", m)
	}
}

func errorCode(m map[string]any) int {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	f, _ := e["code"].(float64)
	return int(f)
}

// TestMalformedAndLifecycle sends requests before initialize, malformed
// JSON, unknown methods, a dump that is not a core, a load cancelled
// mid-way, two dumps one after the other and requests after shutdown, and
// checks the server answers each correctly and keeps serving.
func TestMalformedAndLifecycle(t *testing.T) {
	dir := testdataDir(t)
	a, b := net.Pipe()
	srv := server.New(server.Options{Logger: testLogger(t)})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), a) }()
	c := &rawClient{t: t, conn: b, r: bufio.NewReader(b)}
	t.Cleanup(func() { b.Close() })

	hover := `"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///x.c"},"position":{"line":0,"character":0}}`
	c.send(`{"jsonrpc":"2.0","id":1,` + hover + `}`)
	if m := c.response("1"); errorCode(m) != int(jsonrpc2.ServerNotInitialized) {
		t.Errorf("hover before initialize: %v, want ServerNotInitialized", m)
	}

	c.send(`{"jsonrpc":"2.0","id":2,"method":`)
	if m := c.response("null"); errorCode(m) != int(jsonrpc2.ParseError) {
		t.Errorf("malformed JSON: %v, want ParseError", m)
	}
	c.send(`{"jsonrpc":"2.0","id":3}`)
	if m := c.response("null"); errorCode(m) != int(jsonrpc2.InvalidRequest) {
		t.Errorf("object without method: %v, want InvalidRequest", m)
	}

	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"processId":null,"rootUri":%q,"capabilities":{}}}`,
		uri.File(dir))
	c.send(init)
	if m := c.response("4"); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)

	c.send(`{"jsonrpc":"2.0","id":5,"method":"faultline/unknown","params":{}}`)
	if m := c.response("5"); errorCode(m) != int(jsonrpc2.MethodNotFound) {
		t.Errorf("unknown method: %v, want MethodNotFound", m)
	}
	c.send(`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"processId":null,"capabilities":{}}}`)
	if m := c.response("6"); errorCode(m) != int(jsonrpc2.InvalidRequest) {
		t.Errorf("second initialize: %v, want InvalidRequest", m)
	}

	open := func(id int, dump, exe, token string) {
		arg := map[string]string{"dump": dump}
		if exe != "" {
			arg["exe"] = exe
		}
		b, _ := json.Marshal(arg)
		tok := ""
		if token != "" {
			tok = fmt.Sprintf(`"workDoneToken":%q,`, token)
		}
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"workspace/executeCommand","params":{%s"command":"faultline.open","arguments":[%s]}}`, id, tok, b))
	}

	// A source file is not a core: a failed command and a showMessage.
	open(7, dir+"/null_inline.cpp", "", "")
	m := c.response("7")
	// (analysis words the reason; the server passes it on naming the file.)
	if errorCode(m) != int(protocol.LSPErrorCodesRequestFailed) || !strings.Contains(fmt.Sprint(m["error"]), "null_inline.cpp is ") {
		t.Errorf("open of a source file: %v", m)
	}
	if !sawMessage(c.seen, "window/showMessage", "null_inline.cpp is ") {
		t.Errorf("no window/showMessage about the bad dump; saw %v", c.seen)
	}
	open(8, dir+"/cores/missing.core", "", "")
	if m := c.response("8"); errorCode(m) != int(protocol.LSPErrorCodesRequestFailed) {
		t.Errorf("open of a missing file: %v", m)
	}
	open(9, dir+"/cores/null_inline.core.gz", dir+"/bin/no-such-exe", "")
	if m := c.response("9"); !strings.Contains(fmt.Sprint(m["error"]), "no-such-exe does not exist") {
		t.Errorf("open with a missing executable: %v", m)
	}

	// Cancelled mid-load: the cancel follows the request on the wire.
	open(10, dir+"/cores/threads64.core.gz", dir+"/bin/threads64", "load-10")
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":10}}`)
	if m := c.response("10"); errorCode(m) != int(protocol.CodeRequestCancelled) {
		t.Errorf("cancelled open: %v, want RequestCancelled", m)
	}

	// Two dumps one after the other: the first one's diagnostics go away.
	open(11, dir+"/cores/null_inline.core.gz", dir+"/bin/null_inline", "")
	if m := c.response("11"); !strings.Contains(fmt.Sprint(m["result"]), "value_of") {
		t.Fatalf("open null_inline: %v", m)
	}
	c.seen = nil
	open(12, dir+"/cores/threads64.core.gz", dir+"/bin/threads64", "")
	if m := c.response("12"); !strings.Contains(fmt.Sprint(m["result"]), "finish_job") {
		t.Fatalf("open threads64: %v", m)
	}
	if !clearedDiagnostics(c.seen, "null_inline.cpp") {
		t.Errorf("null_inline.cpp's diagnostics were not cleared when threads64 was opened: %v", c.seen)
	}
	c.send(`{"jsonrpc":"2.0","id":13,"method":"faultline/threads"}`)
	if m := c.response("13"); len(m["result"].(map[string]any)["threads"].([]any)) != 65 {
		t.Errorf("faultline/threads after the second open: %v", m)
	}

	c.send(`{"jsonrpc":"2.0","id":14,"method":"shutdown"}`)
	if m := c.response("14"); m["error"] != nil {
		t.Errorf("shutdown: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","id":15,` + hover + `}`)
	if m := c.response("15"); errorCode(m) != int(jsonrpc2.InvalidRequest) {
		t.Errorf("hover after shutdown: %v, want InvalidRequest", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"exit"}`)
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after shutdown and exit: %v", err)
		}
	case <-time.After(awaitTimeout):
		t.Fatal("Serve did not return after exit")
	}
}

// TestExitWithoutShutdown: exit alone ends Serve with ErrExitWithoutShutdown
// (exit code 1).
func TestExitWithoutShutdown(t *testing.T) {
	a, b := net.Pipe()
	srv := server.New(server.Options{Logger: testLogger(t)})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), a) }()
	c := &rawClient{t: t, conn: b, r: bufio.NewReader(b)}
	c.send(`{"jsonrpc":"2.0","method":"exit"}`)
	select {
	case err := <-served:
		if err != server.ErrExitWithoutShutdown {
			t.Errorf("Serve = %v, want ErrExitWithoutShutdown", err)
		}
	case <-time.After(awaitTimeout):
		t.Fatal("Serve did not return after exit")
	}
}

func sawMessage(seen []map[string]any, method, text string) bool {
	for _, m := range seen {
		if m["method"] == method && strings.Contains(fmt.Sprint(m["params"]), text) {
			return true
		}
	}
	return false
}

func clearedDiagnostics(seen []map[string]any, file string) bool {
	for _, m := range seen {
		p, _ := m["params"].(map[string]any)
		if m["method"] == "textDocument/publishDiagnostics" && strings.HasSuffix(fmt.Sprint(p["uri"]), "/"+file) {
			if d, _ := p["diagnostics"].([]any); len(d) == 0 {
				return true
			}
		}
	}
	return false
}

// panickingValues panics when asked for values, as a buggy reader would.
type panickingValues struct{}

func (panickingValues) FrameValues(int, int) ([]server.Value, error) { panic("value reader bug") }

// TestHandlerPanic: a panic in a handler is answered as an InternalError and
// the server keeps answering.
func TestHandlerPanic(t *testing.T) {
	e := newEnv(t, map[string]any{}, server.Options{
		Values: func(*analysis.Session) server.ValueReader { return panickingValues{} },
	})
	e.OpenDump("null_inline")
	pos := protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: e.URI("null_inline.cpp")},
		Position: protocol.Position{Line: 15}}
	_, err := e.Server.Hover(e.ctx, &protocol.HoverParams{TextDocumentPositionParams: pos})
	var je *jsonrpc2.Error
	if err == nil || !asError(err, &je) || je.Code != jsonrpc2.InternalError || !strings.Contains(je.Message, "value reader bug") {
		t.Fatalf("hover with a panicking value reader: %v, want InternalError", err)
	}
	items, err := e.Server.PrepareCallHierarchy(e.ctx, &protocol.CallHierarchyPrepareParams{TextDocumentPositionParams: pos})
	if err != nil || len(items) != 1 || items[0].Name != "value_of" {
		t.Errorf("after the panic: %v, %v", items, err)
	}
	if err := e.Shutdown(); err != nil {
		t.Error(err)
	}
}

func asError(err error, target **jsonrpc2.Error) bool {
	return errors.As(err, target)
}
