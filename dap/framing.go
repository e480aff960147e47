package dap

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxMessage caps one message's body: DAP requests are small (the largest
// are setBreakpoints lists), and Content-Length comes from the client.
const maxMessage = 16 << 20

// maxHeaderLine caps one header line.
const maxHeaderLine = 4096

// FrameError is a malformed base-protocol frame ("Content-Length: N\r\n\r\n"
// then N bytes of JSON), with the byte offset in the stream where it was
// found.
type FrameError struct {
	Offset int64
	Reason string
}

func (e *FrameError) Error() string {
	return fmt.Sprintf("dap framing at byte %d: %s", e.Offset, e.Reason)
}

// frameReader reads base-protocol frames.
type frameReader struct {
	r   *bufio.Reader
	off int64
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next message body. Headers other than Content-Length
// are ignored, as the protocol allows.
func (f *frameReader) next() ([]byte, error) {
	length := -1
	start := f.off
	for {
		line, err := f.line()
		if err != nil {
			if err == io.EOF && f.off == start {
				return nil, io.EOF
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, &FrameError{start, fmt.Sprintf("header line %q has no colon", clip(line))}
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, &FrameError{start, fmt.Sprintf("bad Content-Length %q", clip(value))}
			}
			if n > maxMessage {
				return nil, &FrameError{start, fmt.Sprintf("Content-Length %d exceeds the %d-byte cap", n, maxMessage)}
			}
			length = n
		}
	}
	if length < 0 {
		return nil, &FrameError{start, "no Content-Length header"}
	}
	body := make([]byte, length)
	n, err := io.ReadFull(f.r, body)
	f.off += int64(n)
	if err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	return body, nil
}

// line reads one CRLF- (or LF-) terminated header line without the end.
func (f *frameReader) line() (string, error) {
	var b []byte
	for {
		c, err := f.r.ReadByte()
		if err != nil {
			return "", err
		}
		f.off++
		if c == '\n' {
			return strings.TrimSuffix(string(b), "\r"), nil
		}
		if len(b) >= maxHeaderLine {
			return "", &FrameError{f.off, "header line too long"}
		}
		b = append(b, c)
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// envelope is the part of every message that routing needs.
type envelope struct {
	Seq     int    `json:"seq"`
	Type    string `json:"type"`
	Command string `json:"command"`
}

func parseEnvelope(body []byte) (envelope, error) {
	var e envelope
	err := json.Unmarshal(body, &e)
	return e, err
}
