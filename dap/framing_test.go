package dap

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

func TestFrameReader(t *testing.T) {
	in := "Content-Length: 2\r\n\r\n{}" + "content-length:3\r\nX-Other: 1\r\n\r\n[1]"
	fr := newFrameReader(strings.NewReader(in))
	for _, want := range []string{"{}", "[1]"} {
		b, err := fr.next()
		if err != nil || string(b) != want {
			t.Fatalf("next = %q, %v; want %q", b, err, want)
		}
	}
	if _, err := fr.next(); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
	for _, bad := range []string{
		"Content-Length: 99999999999\r\n\r\n",
		"Content-Length: -1\r\n\r\n",
		"no colon\r\n\r\n",
		"X: 1\r\n\r\n{}",
		strings.Repeat("a", maxHeaderLine+10),
	} {
		_, err := newFrameReader(strings.NewReader(bad)).next()
		var fe *FrameError
		if !errors.As(err, &fe) {
			t.Errorf("%.30q: err = %v, want a FrameError", bad, err)
		}
	}
	if _, err := newFrameReader(strings.NewReader("Content-Length: 10\r\n\r\n{}")).next(); err != io.ErrUnexpectedEOF {
		t.Errorf("short body: %v, want io.ErrUnexpectedEOF", err)
	}
}

// FuzzFrames: any bytes on stdin end in messages, FrameErrors or the end
// of the input; never a panic, a hang or a body over the cap.
func FuzzFrames(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 99999999999\r\n\r\n"))
	f.Add([]byte("Content-Length: 5\r\n\r\n{\"se"))
	f.Add([]byte("\n\n\nContent-Length:0\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			fr := newFrameReader(bytes.NewReader(b))
			for range 10_000 {
				body, err := fr.next()
				if err != nil {
					return
				}
				if len(body) > maxMessage {
					t.Fatalf("body of %d bytes", len(body))
				}
				parseEnvelope(body)
			}
			t.Fatal("10000 messages from a finite input")
		})
	})
}
