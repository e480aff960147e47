package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/faultline-dev/faultline/server"
)

// awaitTimeout bounds every wait on a condition; conditions are checked on
// every message the fake client receives, never on a timer.
const awaitTimeout = 60 * time.Second

// fakeClient is an in-process LSP client, in the manner of gopls'
// integration tests: it records what the server sends and wakes waiters on
// every message.
type fakeClient struct {
	protocol.UnimplementedClient

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every message
	diags    map[uri.URI][]protocol.Diagnostic
	diagLog  []uri.URI           // every publishDiagnostics, in order, with diagnostics
	progress map[string][]string // token → kinds ("begin", "report", "end") in order
	titles   map[string]string   // token → the begin's title
	reports  map[string][]string // token → messages of begin, report and end, in order
	events   []string            // "progress:<token>:<kind>", "diagnostics:<uri>", in order
	messages []protocol.ShowMessageParams
	shown    []protocol.ShowDocumentParams
	// createGate, when set, holds the answer to window/workDoneProgress/create.
	createGate chan struct{}
	created    int
	// lensRefreshes counts workspace/codeLens/refresh requests.
	lensRefreshes int
}

func newFakeClient() *fakeClient {
	return &fakeClient{
		changed:  make(chan struct{}),
		diags:    map[uri.URI][]protocol.Diagnostic{},
		progress: map[string][]string{},
		titles:   map[string]string{},
		reports:  map[string][]string{},
	}
}

func (c *fakeClient) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *fakeClient) PublishDiagnostics(_ context.Context, p *protocol.PublishDiagnosticsParams) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.diags[p.URI] = p.Diagnostics
	if len(p.Diagnostics) > 0 {
		c.diagLog = append(c.diagLog, p.URI)
	}
	c.events = append(c.events, "diagnostics:"+string(p.URI))
	c.notify()
	return nil
}

func (c *fakeClient) Progress(_ context.Context, p *protocol.ProgressParams) error {
	var v struct {
		Kind    string `json:"kind"`
		Title   string `json:"title"`
		Message string `json:"message"`
	}
	json.Unmarshal(p.Value, &v)
	key := fmt.Sprint(p.Token)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.progress[key] = append(c.progress[key], v.Kind)
	if v.Kind == "begin" {
		c.titles[key] = v.Title
	}
	if v.Message != "" {
		c.reports[key] = append(c.reports[key], v.Message)
	}
	c.events = append(c.events, "progress:"+key+":"+v.Kind)
	c.notify()
	return nil
}

func (c *fakeClient) WorkDoneProgressCreate(ctx context.Context, _ *protocol.WorkDoneProgressCreateParams) error {
	c.mu.Lock()
	gate := c.createGate
	c.created++
	c.notify()
	c.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	return nil
}

func (c *fakeClient) ShowMessage(_ context.Context, p *protocol.ShowMessageParams) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.messages = append(c.messages, *p)
	c.notify()
	return nil
}

func (c *fakeClient) LogMessage(context.Context, *protocol.LogMessageParams) error { return nil }

func (c *fakeClient) ShowDocument(_ context.Context, p *protocol.ShowDocumentParams) (*protocol.ShowDocumentResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shown = append(c.shown, *p)
	c.notify()
	return &protocol.ShowDocumentResult{Success: true}, nil
}

func (c *fakeClient) CodeLensRefresh(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lensRefreshes++
	c.events = append(c.events, "codeLensRefresh")
	c.notify()
	return nil
}

func (c *fakeClient) InlayHintRefresh(context.Context) error { return nil }

// Env is one server and its fake client, connected over an in-memory pipe
// with the LSP base protocol.
type Env struct {
	t      testing.TB
	ctx    context.Context
	Server protocol.Server
	Client *fakeClient
	conn   jsonrpc2.Conn
	served chan error
	// Folder is the workspace folder (testdata/native unless newEnvIn names another).
	Folder string
}

// testdataDir is the repository's testdata/native.
func testdataDir(t testing.TB) string {
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "native"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Fatalf("test cores missing: %v", err)
	}
	return dir
}

// newEnv starts a server and initializes it with the workspace folder
// testdata/native and initializationOptions opts.
func newEnv(t testing.TB, opts any, sopts server.Options) *Env {
	t.Helper()
	return newEnvIn(t, testdataDir(t), opts, sopts)
}

// newEnvIn starts a server and initializes it with the workspace folder
// folder and initializationOptions opts.
func newEnvIn(t testing.TB, folder string, opts any, sopts server.Options) *Env {
	t.Helper()
	return newEnvFolders(t, []string{folder}, opts, sopts)
}

// newEnvFolders starts a server and initializes it with workspaceFolders
// folders: nil sends null (no workspace: rootUri null too), an empty
// slice [] (Neovim 0.12's vim.lsp.enable without a root marker).
func newEnvFolders(t testing.TB, folders []string, opts any, sopts server.Options) *Env {
	t.Helper()
	folder := ""
	if len(folders) > 0 {
		folder = folders[0]
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a, b := net.Pipe()
	if sopts.Logger == nil {
		sopts.Logger = testLogger(t)
	}
	srv := server.New(sopts)
	e := &Env{t: t, ctx: ctx, Client: newFakeClient(), served: make(chan error, 1), Folder: folder}
	go func() { e.served <- srv.Serve(ctx, a) }()
	e.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(b), jsonrpc2.WithCodec(testCodec{}))
	clientHandler := protocol.ClientHandler(e.Client, jsonrpc2.MethodNotFoundHandler)
	e.conn.Go(ctx, func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.IsCall() {
			jsonrpc2.Async(ctx) // server→client calls may block (createGate)
		}
		return clientHandler(ctx, req)
	})
	e.Server = protocol.ServerDispatcher(e.conn)
	t.Cleanup(func() { e.conn.Close() })

	raw, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	params := &protocol.InitializeParams{
		InitializationOptions: raw,
		Capabilities: protocol.ClientCapabilities{
			// The fake client opens faultline-frame: documents, as the
			// VS Code extension does.
			Experimental: protocol.LSPAny(`{"faultlineFrameDocuments":true}`),
			Window: &protocol.WindowClientCapabilities{
				WorkDoneProgress: &yes,
				ShowDocument:     &protocol.ShowDocumentClientCapabilities{Support: true},
			},
			Workspace: &protocol.WorkspaceClientCapabilities{
				CodeLens:  &protocol.CodeLensWorkspaceClientCapabilities{RefreshSupport: &yes},
				InlayHint: &protocol.InlayHintWorkspaceClientCapabilities{RefreshSupport: &yes},
			},
		},
	}
	params.WorkspaceFolders = protocol.NullNullable[[]protocol.WorkspaceFolder]()
	if folders != nil {
		wf := []protocol.WorkspaceFolder{}
		for _, f := range folders {
			wf = append(wf, protocol.WorkspaceFolder{URI: uri.File(f), Name: filepath.Base(f)})
		}
		params.WorkspaceFolders = protocol.NewNullable(wf)
	}
	res, err := e.Server.Initialize(ctx, params)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if len(res.Capabilities.ExecuteCommandProvider.Commands) == 0 {
		t.Fatal("initialize: no executeCommandProvider commands")
	}
	if err := e.Server.Initialized(ctx, &protocol.InitializedParams{}); err != nil {
		t.Fatal(err)
	}
	return e
}

// Path is a file of the workspace folder.
func (e *Env) Path(name string) string { return filepath.Join(e.Folder, name) }

// URI is a file of the workspace folder, symlinks resolved as the server does.
func (e *Env) URI(name string) uri.URI {
	p := e.Path(name)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return uri.File(p)
}

// Execute runs a workspace command and decodes its result into out.
func (e *Env) Execute(command string, arg, out any) error {
	e.t.Helper()
	raw, err := json.Marshal(arg)
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := e.Server.ExecuteCommand(e.ctx, &protocol.ExecuteCommandParams{Command: command, Arguments: []protocol.LSPAny{raw}})
	if err != nil {
		return err
	}
	if out != nil {
		return json.Unmarshal(res, out)
	}
	return nil
}

// OpenDump opens testdata/native's core and binary for a manifest case.
func (e *Env) OpenDump(name string) server.OpenSummary {
	e.t.Helper()
	var sum server.OpenSummary
	err := e.Execute(server.CommandOpen, map[string]string{
		"dump": e.Path("cores/" + name + ".core.gz"),
		"exe":  e.Path("bin/" + name),
	}, &sum)
	if err != nil {
		e.t.Fatalf("faultline.open %s: %v", name, err)
	}
	return sum
}

// Await waits until cond holds on the client's state.
func (e *Env) Await(what string, cond func(c *fakeClient) bool) {
	e.t.Helper()
	deadline := time.NewTimer(awaitTimeout)
	defer deadline.Stop()
	for {
		e.Client.mu.Lock()
		ok := cond(e.Client)
		ch := e.Client.changed
		e.Client.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			e.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Diagnostics returns the diagnostics last published for u.
func (e *Env) Diagnostics(u uri.URI) []protocol.Diagnostic {
	e.Client.mu.Lock()
	defer e.Client.mu.Unlock()
	return append([]protocol.Diagnostic(nil), e.Client.diags[u]...)
}

// Shutdown sends shutdown and exit and waits for Serve to end.
func (e *Env) Shutdown() error {
	e.t.Helper()
	if err := e.Server.Shutdown(e.ctx); err != nil {
		e.t.Fatalf("shutdown: %v", err)
	}
	if err := e.Server.Exit(e.ctx); err != nil {
		e.t.Fatalf("exit: %v", err)
	}
	select {
	case err := <-e.served:
		return err
	case <-time.After(awaitTimeout):
		e.t.Fatal("Serve did not return after exit")
		return nil
	}
}

func message(d protocol.Diagnostic) string {
	if s, ok := d.Message.(protocol.String); ok {
		return string(s)
	}
	return fmt.Sprint(d.Message)
}

func hoverText(h *protocol.Hover) string {
	if h == nil {
		return ""
	}
	if m, ok := h.Contents.(*protocol.MarkupContent); ok {
		return m.Value
	}
	return fmt.Sprint(h.Contents)
}

func lensTitles(ls []protocol.CodeLens, line uint32) string {
	var t []string
	for _, l := range ls {
		if l.Range.Start.Line == line {
			t = append(t, l.Command.Title)
		}
	}
	return strings.Join(t, " | ")
}

// testCodec is the LSP payload codec (as protocol.NewClient wires it).
type testCodec struct{}

func (testCodec) Marshal(v any) ([]byte, error) {
	if m, ok := v.(jsonrpc2.RawMessage); ok {
		return m, nil
	}
	return protocol.Marshal(v)
}

func (testCodec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	return protocol.Unmarshal(data, v)
}

// testLogger logs to t until the test ends; the server's background work
// may outlive a test by a moment, and t.Log then panics.
func testLogger(t testing.TB) *zap.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.t = nil
		w.mu.Unlock()
	})
	enc := zap.NewDevelopmentEncoderConfig()
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(w), zapcore.DebugLevel))
}

type testWriter struct {
	mu sync.Mutex
	t  testing.TB
}

func (w *testWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t != nil {
		w.t.Log(strings.TrimRight(string(b), "\n"))
	}
	return len(b), nil
}
