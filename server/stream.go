package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap"
)

// frameReader is the raw-frame side of jsonrpc2's header stream.
type frameReader interface {
	ReadFrame(ctx context.Context) ([]byte, int64, error)
}

// maxBadHeaders bounds how many malformed frame headers in a row are skipped
// before the stream is given up as not speaking the LSP base protocol.
const maxBadHeaders = 64

// tolerantStream is the LSP base-protocol stream (Content-Length framing,
// LSP 3.17 §"Base Protocol") that survives malformed messages: jsonrpc2
// v1.0.1 ends the connection on a frame that is not JSON, where JSON-RPC 2.0
// §5 asks for a Parse error (-32700) or Invalid Request (-32600) response
// with a null id. A frame with a broken header is logged and skipped.
type tolerantStream struct {
	inner jsonrpc2.Stream
	raw   frameReader
	log   *zap.Logger
}

func newTolerantStream(rwc io.ReadWriteCloser, log *zap.Logger) jsonrpc2.Stream {
	inner := jsonrpc2.NewHeaderStream(rwc)
	raw, ok := inner.(frameReader)
	if !ok {
		return inner
	}
	return &tolerantStream{inner: inner, raw: raw, log: log}
}

// Read implements jsonrpc2.Stream.
func (s *tolerantStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	bad := 0
	for {
		frame, n, err := s.raw.ReadFrame(ctx)
		if errors.Is(err, jsonrpc2.ErrInvalidHeader) && bad < maxBadHeaders {
			bad++
			s.log.Warn("skipping a frame with a malformed header", zap.Error(err))
			continue
		}
		if err != nil {
			return nil, n, err
		}
		bad = 0
		msg, err := jsonrpc2.DecodeMessage(frame)
		if err == nil {
			return msg, n, nil
		}
		s.log.Warn("answering a malformed message", zap.Error(err), zap.Int("bytes", len(frame)))
		err = jsonrpc2.ErrParse
		if json.Valid(frame) {
			err = jsonrpc2.ErrInvalidRequest
		}
		if _, werr := s.inner.Write(ctx, jsonrpc2.NewResponse(jsonrpc2.ID{}, nil, err)); werr != nil {
			return nil, n, werr
		}
	}
}

// Write implements jsonrpc2.Stream.
func (s *tolerantStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	return s.inner.Write(ctx, msg)
}

// Close implements jsonrpc2.Stream.
func (s *tolerantStream) Close() error { return s.inner.Close() }
