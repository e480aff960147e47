package server

import (
	"bytes"
	"context"
	"io"
	"testing"

	"go.uber.org/zap"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzParseSettings: initializationOptions and didChangeConfiguration come
// from the client; any bytes give settings or an error, never a panic.
func FuzzParseSettings(f *testing.F) {
	f.Add([]byte(`{"dumps":["core.gz",{"dump":"c","exe":"e"}],"sourceMap":{"/b":"/l"},"cacheDir":"~/c","offline":true,"debugDirs":["/d"]}`))
	f.Add([]byte(`{"faultline":{"sourceMap":{"/build":"/src"}}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			st, err := parseSettings(b)
			if err != nil {
				return
			}
			r := newResolver(nil, []string{t.TempDir()}, st)
			r.Lookup("a/b.c")
		})
	})
}

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
			s := newTolerantStream(rw, zap.NewNop())
			for range 10_000 {
				if _, _, err := s.Read(context.Background()); err != nil {
					return // io.EOF, io.ErrUnexpectedEOF or a header error
				}
			}
			t.Fatal("10000 messages from a finite input")
		})
	})
}
