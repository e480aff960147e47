package lspstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap"
)

// frameReader is the raw-frame side of jsonrpc2's header stream.
type frameReader interface {
	ReadFrame(ctx context.Context) ([]byte, int64, error)
}

// FramingError is why the server stopped reading its input: a frame header
// it cannot parse (Content-Length missing, not a number, negative, over
// 1 GiB), or input that ended inside a frame. LSP framing cannot be
// resynchronised (a wrong length leaves the reader inside some other
// message), so the first such error ends the connection and `serve` exits
// non-zero at once instead of silently dropping the requests that follow.
type FramingError struct {
	Offset int64 // input bytes read before the bad frame
	Err    error
}

func (e *FramingError) Error() string {
	return fmt.Sprintf("LSP framing error after %d bytes of input: %v", e.Offset, e.Err)
}

func (e *FramingError) Unwrap() error { return e.Err }

// TolerantStream is the LSP base-protocol stream (Content-Length framing,
// LSP 3.17 §"Base Protocol") that survives malformed messages: jsonrpc2
// v1.0.1 ends the connection on a frame that is not JSON, where JSON-RPC 2.0
// §5 asks for a Parse error (-32700) or Invalid Request (-32600) response
// with a null id. A frame whose framing is broken ends the stream with a
// FramingError (logged).
type TolerantStream struct {
	inner jsonrpc2.Stream
	raw   frameReader
	log   *zap.Logger

	read    atomic.Int64 // bytes read so far
	framing atomic.Pointer[FramingError]
}

func NewTolerantStream(rwc io.ReadWriteCloser, log *zap.Logger) *TolerantStream {
	inner := jsonrpc2.NewHeaderStream(rwc)
	raw, _ := inner.(frameReader)
	return &TolerantStream{inner: inner, raw: raw, log: log}
}

// Framing returns the framing error that ended the stream, if one did.
func (s *TolerantStream) Framing() *FramingError { return s.framing.Load() }

// Read implements jsonrpc2.Stream.
func (s *TolerantStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	if s.raw == nil {
		return s.inner.Read(ctx)
	}
	for {
		frame, n, err := s.raw.ReadFrame(ctx)
		off := s.read.Add(n) - n
		if errors.Is(err, jsonrpc2.ErrInvalidHeader) || errors.Is(err, io.ErrUnexpectedEOF) {
			fe := &FramingError{Offset: off, Err: err}
			s.framing.CompareAndSwap(nil, fe)
			s.log.Error("ending the connection", zap.Error(fe))
			return nil, n, fe
		}
		if err != nil {
			return nil, n, err
		}
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
func (s *TolerantStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	return s.inner.Write(ctx, msg)
}

// Close implements jsonrpc2.Stream.
func (s *TolerantStream) Close() error { return s.inner.Close() }
