package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"
)

// errServerNotInitialized answers requests that arrive before initialize
// (LSP 3.17 §"Initialize Request": ServerNotInitialized, -32002).
var errServerNotInitialized = jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "faultline: server not initialized")

// errShutDown answers requests after shutdown (LSP 3.17 §"Shutdown Request":
// InvalidRequest).
var errShutDown = jsonrpc2.NewError(jsonrpc2.InvalidRequest, "faultline: server is shut down")

// handler builds the connection's handler chain around the protocol
// dispatcher:
//
//   - calls (requests) are released with jsonrpc2.Async and then run
//     concurrently, under a context derived from the server's, never from
//     the request's (jsonrpc2 v1.0.1 pools request contexts, and one derived
//     from them may outlive its request);
//   - a call is registered for $/cancelRequest (LSP 3.17 §"Cancellation
//     Support") while still on the read loop, so a cancel that follows it on
//     the wire always finds it;
//   - notifications run inline on the read loop, in wire order, so
//     didChangeConfiguration and friends apply in the order they were sent;
//   - the lifecycle is enforced: ServerNotInitialized before initialize,
//     InvalidRequest after shutdown, notifications other than exit dropped
//     before initialize;
//   - a panic in a handler is recovered, logged with its stack, and answered
//     as an InternalError instead of tearing down the connection;
//   - a notification's error is logged, never returned (jsonrpc2 treats it
//     as a connection failure).
func (s *Server) handler() jsonrpc2.Handler {
	dispatch := s.recovering(protocol.ServerHandler(s, jsonrpc2.MethodNotFoundHandler))
	var mu sync.Mutex
	inflight := map[jsonrpc2.ID]context.CancelFunc{}
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		method := req.Method()
		if !req.IsCall() {
			switch method {
			case protocol.MethodCancelRequest:
				var p protocol.CancelParams
				if err := protocol.Unmarshal(req.Params(), &p); err != nil {
					s.log.Warn("malformed $/cancelRequest", zap.Error(err))
					return nil, nil
				}
				var id jsonrpc2.ID
				switch v := p.ID.(type) {
				case protocol.Integer:
					id = jsonrpc2.NewNumberID(int64(v))
				case protocol.String:
					id = jsonrpc2.NewStringID(string(v))
				}
				mu.Lock()
				cancel := inflight[id]
				mu.Unlock()
				if cancel != nil {
					cancel()
				}
				return nil, nil
			case protocol.MethodExit, protocol.MethodInitialized:
			default:
				if s.phase() != phaseRunning {
					s.log.Debug("notification dropped outside the running phase", zap.String("method", method))
					return nil, nil
				}
			}
			if _, err := dispatch(ctx, req); err != nil {
				s.log.Warn("notification failed", zap.String("method", method), zap.Error(err))
			}
			return nil, nil
		}

		id := req.ID()
		cctx, cancel := context.WithCancel(s.ctx)
		mu.Lock()
		inflight[id] = cancel
		mu.Unlock()
		defer func() {
			mu.Lock()
			delete(inflight, id)
			mu.Unlock()
			cancel()
		}()
		jsonrpc2.Async(ctx)

		switch ph := s.phase(); {
		case method == protocol.MethodInitialize:
			if ph != phaseNew {
				return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "faultline: initialize sent twice")
			}
		case ph == phaseNew:
			return nil, errServerNotInitialized
		case ph == phaseShutDown:
			return nil, errShutDown
		}
		var res any
		var err error
		if isCustom(method) {
			// Custom requests may come without params, which the protocol
			// dispatcher rejects as a parse error; each decodes its own.
			res, err = s.Request(cctx, method, json.RawMessage(req.Params()))
		} else {
			res, err = dispatch(cctx, req)
		}
		if err != nil && cctx.Err() != nil && s.ctx.Err() == nil {
			return nil, protocol.ErrRequestCancelled
		}
		return res, asInvalidParams(method, err)
	}
}

// asInvalidParams turns the dispatcher's ParseError for params that are
// valid JSON of the wrong shape into InvalidParams (JSON-RPC 2.0 §5.1:
// -32700 is for JSON the server could not parse, and the message it came
// in was parsed; -32602 is for invalid method parameters).
func asInvalidParams(method string, err error) error {
	if err == nil || !errors.Is(err, jsonrpc2.ErrParse) {
		return err
	}
	return jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("faultline: invalid params for %s: %v", method, err))
}

// isCustom tells whether method is one of faultline's own requests.
func isCustom(method string) bool {
	return strings.HasPrefix(method, "faultline/")
}

// recovering turns a panic in h into a logged InternalError answer.
func (s *Server) recovering(h jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (res any, err error) {
		defer func() {
			if p := recover(); p != nil {
				method := strings.Clone(req.Method())
				s.log.Error("panic in handler", zap.String("method", method),
					zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
				res, err = nil, jsonrpc2.NewError(jsonrpc2.InternalError,
					fmt.Sprintf("faultline: internal error in %s: %v", method, p))
			}
		}()
		return h(ctx, req)
	}
}
