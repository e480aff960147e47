package server

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
	"go.uber.org/zap"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/server/lspstream"
	"github.com/faultline-dev/faultline/server/modulepool"
)

// Name is the server's name in InitializeResult.serverInfo.
const Name = "faultline"

// ErrExitWithoutShutdown is Serve's result when the client sent exit
// without shutdown first, or went away without either (LSP 3.17 §"Exit
// Notification": the process exits with code 1 then).
var ErrExitWithoutShutdown = errors.New("exit without shutdown")

// closeWait bounds how long Serve waits for the connection to close after
// exit (LSP 3.17 §"Exit Notification": the server exits then).
const closeWait = 50 * time.Millisecond

// Options configure a Server.
type Options struct {
	// Logger receives the server's logs (zap.NewNop when nil). The protocol
	// stream is never used for logs.
	Logger *zap.Logger
	// Version is reported in serverInfo.
	Version string
	// Values, when set, reads argument and local values of frames for
	// hovers and inlay hints (see ValueReader).
	Values func(*analysis.Session) ValueReader
}

// Server is one language-server connection's state. Create it with New and
// run it with Serve; it serves a single client.
type Server struct {
	protocol.UnimplementedServer

	log    *zap.Logger
	opts   Options
	ctx    context.Context // lives as long as Serve
	client protocol.Client

	mu          sync.Mutex
	ph          phase
	sawShutdown bool
	caps        clientCaps
	settings    Settings
	folders     []string
	res         *resolver
	cur         *loaded // the dump being shown, nil when none
	published   map[uri.URI]bool
	loads       map[string]context.CancelFunc // work-done tokens of loads in progress

	// loading is the crashing thread of the load in progress, published
	// before the rest is unwound; lenses come from it meanwhile.
	loading *view
	// openSeq numbers faultline.open calls; cancelOpen cancels the latest
	// load (both guarded by mu).
	openSeq    uint64
	cancelOpen context.CancelCauseFunc
	// systemSourcesNoted: the note that system libraries' sources are
	// missing was shown (once per session; guarded by mu).
	systemSourcesNoted bool

	// pool keeps the shown dump's modules open for the next open
	// (server/modulepool).
	pool modulepool.Pool

	pubMu    sync.Mutex // a load's check that it is the latest and its publishing
	loadMu   sync.Mutex // one load at a time
	fetchMu  sync.Mutex // one faultline.fetchSources at a time
	exited   chan struct{}
	exitOnce sync.Once
}

type phase int

const (
	phaseNew phase = iota
	phaseRunning
	phaseShutDown
)

// clientCaps are the client capabilities the server acts on.
type clientCaps struct {
	workDoneProgress bool
	showDocument     bool
	// frameDocuments: the client opens faultline-frame: URIs
	// (capabilities.experimental.faultlineFrameDocuments).
	frameDocuments   bool
	codeLensRefresh  bool
	inlayHintRefresh bool
}

// New returns a server; Serve starts it.
func New(opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &Server{
		log:       log,
		opts:      opts,
		published: map[uri.URI]bool{},
		loads:     map[string]context.CancelFunc{},
		exited:    make(chan struct{}),
		res:       newResolver(nil, nil, Settings{Offline: true}),
	}
}

// Serve speaks LSP over rwc (Content-Length framed JSON-RPC, LSP 3.17
// §"Base Protocol") until the client sends exit, the stream ends, or ctx is
// done. It returns nil after shutdown followed by exit, a *lspstream.FramingError when
// the input broke LSP framing, and ErrExitWithoutShutdown otherwise.
func (s *Server) Serve(ctx context.Context, rwc io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream := lspstream.NewTolerantStream(rwc, s.log)
	conn := jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(lspCodec{}))
	s.ctx = protocol.WithClient(ctx, protocol.ClientDispatcher(conn))
	s.client = protocol.ClientDispatcher(conn)
	conn.Go(s.ctx, s.handler())

	select {
	case <-s.exited:
	case <-conn.Done():
		if err := conn.Err(); err != nil {
			s.log.Info("connection ended", zap.Error(err))
		}
	case <-ctx.Done():
	}
	cancel() // stops loads in progress
	closed := make(chan struct{})
	go func() { conn.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(closeWait):
		// conn.Close waits for the read loop, which waits for input: a
		// client that keeps stdin open after exit (go.lsp.dev's exit does
		// nothing by default) would keep the server alive. Every answer was
		// written before exit was read; the process ends now.
	}
	s.mu.Lock()
	cur := s.cur
	s.cur = nil
	clean := s.sawShutdown
	s.mu.Unlock()
	cur.close()
	s.pool.Close()
	if fe := stream.Framing(); fe != nil {
		return fe
	}
	if !clean {
		return ErrExitWithoutShutdown
	}
	return nil
}

func (s *Server) phase() phase {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ph
}

// lspCodec marshals payloads with go.lsp.dev/protocol's union-aware codec,
// as protocol.NewServer does.
type lspCodec struct{}

func (lspCodec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case jsonrpc2.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case *jsonrpc2.RawMessage:
		if m == nil || *m == nil {
			return []byte("null"), nil
		}
		return *m, nil
	}
	return protocol.Marshal(v)
}

func (lspCodec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	return protocol.Unmarshal(data, v)
}
