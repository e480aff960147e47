package lspframe

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	var b bytes.Buffer
	for _, body := range []string{`{"jsonrpc":"2.0","id":1}`, `{}`} {
		if err := Write(&b, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	b.WriteString("content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n[]")
	r := bufio.NewReader(&b)
	for _, want := range []string{`{"jsonrpc":"2.0","id":1}`, `{}`, `[]`} {
		got, err := Read(r)
		if err != nil || string(got) != want {
			t.Errorf("Read = %q, %v; want %q", got, err, want)
		}
	}
	if got := Frame("{}"); got != "Content-Length: 2\r\n\r\n{}" {
		t.Errorf("Frame = %q", got)
	}
}

func TestReadRefuses(t *testing.T) {
	for _, in := range []string{
		"hello from a print statement\r\n\r\n{}",
		"Content-Type: x\r\n\r\n{}",
		"Content-Length: -5\r\n\r\n",
		"Content-Length: 2000000000\r\n\r\n",
		"Content-Length: 10\r\n\r\n{}",
	} {
		if b, err := Read(bufio.NewReader(strings.NewReader(in))); err == nil {
			t.Errorf("Read(%q) = %q, want an error", in, b)
		}
	}
}
