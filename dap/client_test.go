package dap

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	godap "github.com/google/go-dap"
)

// testClient drives a Server over pipes with go-dap's codec, as an
// editor's client would.
type testClient struct {
	t    *testing.T
	w    io.WriteCloser
	r    *bufio.Reader
	seq  int
	done chan error
	// pending holds events read while waiting for a response.
	events []godap.Message
}

func newTestClient(t *testing.T) *testClient {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	c := &testClient{t: t, w: cw, r: bufio.NewReader(cr), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c.done <- New(Options{}).Serve(ctx, sr, sw)
		sw.Close()
	}()
	t.Cleanup(func() {
		cw.Close()
		cancel()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Error("adapter did not end")
		}
	})
	return c
}

// send writes a request {command, arguments} and returns its seq.
func (c *testClient) send(command string, args any) int {
	c.t.Helper()
	c.seq++
	msg := map[string]any{"seq": c.seq, "type": "request", "command": command}
	if args != nil {
		msg["arguments"] = args
	}
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := godap.WriteBaseMessage(c.w, b); err != nil {
		c.t.Fatal(err)
	}
	return c.seq
}

// next reads one message (with a deadline).
func (c *testClient) next() godap.Message {
	c.t.Helper()
	type res struct {
		m   godap.Message
		err error
	}
	ch := make(chan res, 1)
	go func() {
		m, err := godap.ReadProtocolMessage(c.r)
		ch <- res{m, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			c.t.Fatalf("reading from the adapter: %v", r.err)
		}
		return r.m
	case <-time.After(60 * time.Second):
		c.t.Fatal("no message from the adapter within 60s")
	}
	return nil
}

// request sends a request and returns its response (events read on the
// way are kept for event()).
func (c *testClient) request(command string, args any) godap.ResponseMessage {
	c.t.Helper()
	seq := c.send(command, args)
	for {
		m := c.next()
		if r, ok := m.(godap.ResponseMessage); ok && r.GetResponse().RequestSeq == seq {
			return r
		}
		c.events = append(c.events, m)
	}
}

// ok is request that fails the test on an error response.
func (c *testClient) ok(command string, args any) godap.ResponseMessage {
	c.t.Helper()
	r := c.request(command, args)
	if !r.GetResponse().Success {
		c.t.Fatalf("%s failed: %s", command, r.GetResponse().Message)
	}
	return r
}

// event returns the first event named name, reading until it comes.
func (c *testClient) event(name string) godap.EventMessage {
	c.t.Helper()
	for i, m := range c.events {
		if e, ok := m.(godap.EventMessage); ok && e.GetEvent().Event == name {
			c.events = append(c.events[:i], c.events[i+1:]...)
			return e
		}
	}
	for {
		m := c.next()
		if e, ok := m.(godap.EventMessage); ok && e.GetEvent().Event == name {
			return e
		}
		c.events = append(c.events, m)
	}
}

// corpus returns the path of a file of testdata/native.
func corpus(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "native", rel))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("corpus file missing: %v", err)
	}
	return p
}

// launch runs initialize → launch → configurationDone and returns the
// stopped event.
func (c *testClient) launch(args map[string]any) *godap.StoppedEvent {
	c.t.Helper()
	c.ok("initialize", map[string]any{"adapterID": "faultline", "linesStartAt1": true, "columnsStartAt1": true})
	c.event("initialized")
	c.ok("launch", args)
	c.ok("configurationDone", nil)
	return c.event("stopped").(*godap.StoppedEvent)
}
