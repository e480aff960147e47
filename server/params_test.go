package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/server"
)

// TestWrongParamTypes sends well-formed JSON whose params have the wrong
// types: each is answered InvalidParams (-32602; JSON-RPC 2.0 §5.1 keeps
// ParseError, -32700, for text that is not JSON), for standard methods,
// faultline's commands and its own requests alike, and the server keeps
// serving.
func TestWrongParamTypes(t *testing.T) {
	a, b := net.Pipe()
	srv := server.New(server.Options{Logger: testLogger(t)})
	go srv.Serve(context.Background(), a)
	c := &rawClient{t: t, conn: b, r: bufio.NewReader(b)}
	t.Cleanup(func() { b.Close() })
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":%q,"capabilities":{}}}`,
		uri.File(testdataDir(t))))
	if m := c.response("1"); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	for i, params := range []string{
		`"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///x.c"},"position":{"line":"one","character":0}}`,
		`"method":"textDocument/codeLens","params":{"textDocument":7}`,
		`"method":"textDocument/documentSymbol","params":[1,2]`,
		`"method":"workspace/executeCommand","params":{"command":"faultline.open","arguments":"core"}`,
		`"method":"workspace/executeCommand","params":{"command":"faultline.open","arguments":[{"dump":42}]}`,
		`"method":"faultline/threads","params":{"levels":"all"}`,
		`"method":"faultline/frameDocument","params":{"uri":17}`,
	} {
		id := fmt.Sprint(10 + i)
		c.send(`{"jsonrpc":"2.0","id":` + id + `,` + params + `}`)
		if m := c.response(id); errorCode(m) != int(jsonrpc2.InvalidParams) {
			t.Errorf("%s: %v, want InvalidParams (-32602)", params, m["error"])
		}
	}
	c.send(`{"jsonrpc":"2.0","id":30,"method":"faultline/threads","params":{}}`)
	if m := c.response("30"); m["error"] != nil {
		t.Errorf("faultline/threads after the bad params: %v", m)
	}
}
