package lspstream

import (
	"bytes"
	"context"
	"io"
	"testing"

	"go.uber.org/zap"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// readWriter is a stream that reads from r and discards writes.
type readWriter struct {
	io.Reader
	out bytes.Buffer
}

func (rw *readWriter) Write(b []byte) (int, error) { return rw.out.Write(b) }
func (rw *readWriter) Close() error                { return nil }

// FuzzStream: any bytes on the wire end in messages, answered errors or
// the end of the stream: never a panic or a hang.
func FuzzStream(f *testing.F) {
	f.Add([]byte("Content-Length: 5\r\n\r\n{bad}"))
	f.Add([]byte("Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}  "))
	f.Add([]byte("Content-Length: 2\r\n\r\n[]Content-Length: x\r\n\r\n"))
	f.Add([]byte("Content-Length: 99999999999\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			rw := &readWriter{Reader: bytes.NewReader(b)}
			s := NewTolerantStream(rw, zap.NewNop())
			for range 10_000 {
				if _, _, err := s.Read(context.Background()); err != nil {
					return // io.EOF, io.ErrUnexpectedEOF or a header error
				}
			}
			t.Fatal("10000 messages from a finite input")
		})
	})
}
