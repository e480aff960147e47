// Package lspframe writes and reads the frames of the base protocol that
// `faultline serve` speaks on stdio (LSP 3.17 §"Base Protocol": header lines,
// a blank line, then Content-Length bytes of JSON), for the tests that drive
// the server with raw bytes rather than a client library.
package lspframe

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxBody caps a frame's length as the server does (1 GiB).
const maxBody = 1 << 30

// Frame returns body with its header.
func Frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// Write writes body to w as one frame.
func Write(w io.Writer, body []byte) error {
	_, err := io.WriteString(w, Frame(string(body)))
	return err
}

// Read reads one frame and returns its body. A line that is not a header
// ("Name: value") is an error: the stream carries something else than the
// protocol.
func Read(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("not a header line (the stream carries something else than the protocol): %q", line)
		}
		if strings.EqualFold(k, "Content-Length") {
			if length, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || length < 0 || length > maxBody {
				return nil, fmt.Errorf("bad Content-Length %q", v)
			}
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("a frame without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}
