package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// timing is one open: until the first diagnostic, until the command's reply.
type timing struct{ first, done time.Duration }

// message is any JSON-RPC message, either way.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// maxMessage caps one message from the server.
const maxMessage = 64 << 20

// client is the editor's side of one server: messages read on a goroutine.
type client struct {
	in   io.WriteCloser
	msgs chan message
	errs chan error
	next int
}

func start(bin, root string) (*client, *exec.Cmd, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(bin, "serve")
	cmd.Dir = abs
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	c := &client{in: in, msgs: make(chan message, 1024), errs: make(chan error, 1)}
	go c.read(bufio.NewReader(out))
	return c, cmd, nil
}

func (c *client) read(r *bufio.Reader) {
	tp := textproto.NewReader(r)
	for {
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			c.errs <- fmt.Errorf("reading from the server: %w", err)
			return
		}
		n, err := strconv.Atoi(h.Get("Content-Length"))
		if err != nil || n < 0 || n > maxMessage {
			c.errs <- fmt.Errorf("bad Content-Length %q", h.Get("Content-Length"))
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			c.errs <- err
			return
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			c.errs <- fmt.Errorf("bad message from the server: %w", err)
			return
		}
		c.msgs <- m
	}
}

func (c *client) send(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(b), b)
	return err
}

// call sends a request and returns its id.
func (c *client) call(method string, params any) (string, error) {
	c.next++
	id := strconv.Itoa(c.next)
	return id, c.send(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
}

func (c *client) notify(method string, params any) error {
	return c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// answer replies to a request from the server (progress tokens,
// configuration) the way a plain editor does.
func (c *client) answer(m message) error {
	var result any
	if m.Method == "workspace/configuration" {
		var p struct{ Items []json.RawMessage }
		json.Unmarshal(m.Params, &p)
		result = make([]any, len(p.Items))
	}
	return c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
}

// await reads messages until the reply to id, answering the server's
// requests; onNote sees every notification, and ends the wait by
// returning true.
func (c *client) await(id string, deadline time.Time, onNote func(message) bool) error {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		select {
		case m := <-c.msgs:
			switch {
			case m.Method != "" && len(m.ID) > 0:
				if err := c.answer(m); err != nil {
					return err
				}
			case m.Method != "":
				if onNote != nil && onNote(m) {
					return nil
				}
			case string(m.ID) == id || string(m.ID) == strconv.Quote(id):
				if len(m.Error) > 0 {
					return fmt.Errorf("request %s failed: %s", id, m.Error)
				}
				return nil
			}
		case err := <-c.errs:
			return err
		case <-timer.C:
			return errors.New("timed out waiting for the server")
		}
	}
}
