package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/lspframe"
)

// lspClient speaks JSON-RPC with Content-Length framing to a `faultline
// serve` process over its stdin and stdout.
type lspClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
	nextID int
}

func startServe(t *testing.T, ctx context.Context, args ...string) *lspClient {
	t.Helper()
	c := &lspClient{t: t}
	c.cmd = exec.CommandContext(ctx, binary, append([]string{"serve"}, args...)...)
	c.cmd.Dir = t.TempDir()
	c.cmd.Stderr = &c.stderr
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.cmd.Cancel = func() error { return syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL) }
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.out = bufio.NewReader(out)
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *lspClient) send(msg map[string]any) {
	c.t.Helper()
	msg["jsonrpc"] = "2.0"
	b, _ := json.Marshal(msg)
	if err := lspframe.Write(c.in, b); err != nil {
		c.t.Fatalf("writing to the server: %v\nstderr: %s", err, c.stderr.String())
	}
}

// request sends a request and reads messages until its response; the
// notifications read on the way go to note.
func (c *lspClient) request(method string, params any, note func(method string, params json.RawMessage)) json.RawMessage {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	c.send(map[string]any{"id": id, "method": method, "params": params})
	for {
		m := c.read()
		if m.ID != nil && string(*m.ID) == strconv.Itoa(id) && m.Method == "" {
			if m.Error != nil {
				c.t.Fatalf("%s: error %s", method, m.Error)
			}
			return m.Result
		}
		if m.Method != "" && note != nil {
			note(m.Method, m.Params)
		}
	}
}

type lspMessage struct {
	ID     *json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
}

// read reads one framed message; stdout must carry nothing else.
func (c *lspClient) read() lspMessage {
	c.t.Helper()
	body, err := lspframe.Read(c.out)
	if err != nil {
		c.t.Fatalf("reading the server's stdout: %v\nstderr: %s", err, c.stderr.String())
	}
	var m lspMessage
	if err := json.Unmarshal(body, &m); err != nil {
		c.t.Fatalf("%v: %s", err, body)
	}
	return m
}

// wait waits for the server to exit and returns its exit status.
func (c *lspClient) wait() int {
	c.t.Helper()
	c.in.Close()
	io.Copy(io.Discard, c.out)
	err := c.cmd.Wait()
	if c.cmd.ProcessState == nil {
		c.t.Fatalf("serve: %v", err)
	}
	return c.cmd.ProcessState.ExitCode()
}

// TestServe runs `faultline serve` as an editor does: initialize with a
// core listed in initializationOptions.dumps, the Error diagnostic on the
// culprit line, shutdown, exit → status 0; and exit without shutdown →
// status 1 (LSP 3.17).
func TestServe(t *testing.T) {
	exe := program(t, "trainer.c")
	core := crash(t, exe)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	logFile := filepath.Join(t.TempDir(), "serve.log")
	c := startServe(t, ctx, "--log", logFile)
	init := c.request("initialize", map[string]any{
		"processId": nil, "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"dumps": []map[string]string{{"dump": core, "exe": exe}}},
	}, nil)
	var ir struct {
		Capabilities map[string]any
		ServerInfo   struct{ Name string }
	}
	json.Unmarshal(init, &ir)
	if ir.ServerInfo.Name != "faultline" || ir.Capabilities["codeLensProvider"] == nil || ir.Capabilities["hoverProvider"] == nil {
		t.Fatalf("initialize result: %s", init)
	}
	c.send(map[string]any{"method": "initialized", "params": map[string]any{}})
	crashLine := markerLine(t, "trainer.c", "CRASH") - 1 // LSP lines are 0-based
	for {
		m := c.read()
		if m.Method != "textDocument/publishDiagnostics" {
			continue
		}
		var p struct {
			URI         string
			Diagnostics []struct {
				Severity int
				Message  string
				Range    struct{ Start struct{ Line int } }
			}
		}
		json.Unmarshal(m.Params, &p)
		if !strings.HasSuffix(p.URI, "/trainer.c") {
			continue
		}
		found := false
		for _, d := range p.Diagnostics {
			if d.Severity == 1 && d.Range.Start.Line == crashLine && strings.Contains(d.Message, "SIGSEGV") {
				found = true
			}
		}
		if !found {
			t.Fatalf("no Error diagnostic with SIGSEGV on line %d: %s", crashLine, m.Params)
		}
		break
	}
	if res := c.request("shutdown", nil, nil); string(res) != "null" {
		t.Errorf("shutdown result %s", res)
	}
	c.send(map[string]any{"method": "exit"})
	if code := c.wait(); code != 0 {
		t.Errorf("exit after shutdown: status %d\nstderr: %s", code, c.stderr.String())
	}
	if log, err := os.ReadFile(logFile); err != nil || !bytes.Contains(log, []byte("initialize")) || c.stderr.Len() != 0 {
		t.Errorf("--log %s: %v %q; stderr %q", logFile, err, log, c.stderr.String())
	}

	c = startServe(t, ctx)
	c.request("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}}, nil)
	c.send(map[string]any{"method": "exit"})
	if code := c.wait(); code != 1 {
		t.Errorf("exit without shutdown: status %d, want 1\nstderr: %s", code, c.stderr.String())
	}
	r := faultline(t, invocation{}, "serve", "extra")
	wantExit(t, r, 2)
}

// TestServeExitsWithStdinOpen: after exit the server process ends within
// 200 ms although the client keeps its stdin open (as clients built on
// go.lsp.dev do: their exit does nothing more), with status 0 after
// shutdown and 1 without.
func TestServeExitsWithStdinOpen(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, shutdown := range []bool{true, false} {
		c := startServe(t, ctx)
		c.request("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}}, nil)
		c.send(map[string]any{"method": "initialized", "params": map[string]any{}})
		if shutdown {
			c.request("shutdown", nil, nil)
		}
		exited := make(chan struct{})
		go func() {
			io.Copy(io.Discard, c.out) // stdout ends when the process does
			c.cmd.Wait()
			close(exited)
		}()
		start := time.Now()
		c.send(map[string]any{"method": "exit"})
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			t.Fatalf("shutdown=%v: the server still runs 5 s after exit with stdin open", shutdown)
		}
		took := time.Since(start)
		want := 1
		if shutdown {
			want = 0
		}
		t.Logf("shutdown=%v: exit status %d, %v after exit", shutdown, c.cmd.ProcessState.ExitCode(), took)
		if code := c.cmd.ProcessState.ExitCode(); code != want || took > 200*time.Millisecond {
			t.Errorf("shutdown=%v: exit status %d after %v, want %d within 200 ms\nstderr: %s", shutdown, code, took, want, c.stderr.String())
		}
		c.in.Close()
	}
}
