package main

import (
	"fmt"
	"path/filepath"
	"time"
)

// measure starts one server in root and opens core runs times.
func measure(bin, root, core, exe string, runs int, timeout time.Duration) ([]timing, error) {
	c, cmd, err := start(bin, root)
	if err != nil {
		return nil, err
	}
	defer func() {
		c.in.Close() // the server exits at EOF
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	abs, _ := filepath.Abs(root)
	uri := "file://" + abs
	id, err := c.call("initialize", map[string]any{
		"processId": nil, "rootUri": uri, "capabilities": map[string]any{},
		"workspaceFolders": []map[string]string{{"uri": uri, "name": filepath.Base(abs)}},
	})
	if err != nil {
		return nil, err
	}
	if err := c.await(id, time.Now().Add(timeout), nil); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.notify("initialized", map[string]any{}); err != nil {
		return nil, err
	}
	var out []timing
	for range runs {
		t, err := openOnce(c, core, exe, timeout)
		if err != nil {
			return out, err
		}
		out = append(out, t)
	}
	return out, c.shutdown(timeout)
}

// openOnce runs faultline.open and times the first diagnostic after it.
func openOnce(c *client, core, exe string, timeout time.Duration) (timing, error) {
	args := map[string]string{"dump": core}
	if exe != "" {
		args["exe"] = exe
	}
	start := time.Now()
	id, err := c.call("workspace/executeCommand", map[string]any{"command": "faultline.open", "arguments": []any{args}})
	if err != nil {
		return timing{}, err
	}
	var t timing
	err = c.await(id, start.Add(timeout), func(m message) bool {
		if m.Method == "textDocument/publishDiagnostics" && t.first == 0 {
			t.first = time.Since(start)
		}
		return false
	})
	t.done = time.Since(start)
	if err != nil {
		return t, fmt.Errorf("faultline.open: %w", err)
	}
	if t.first == 0 {
		// A diagnostic may trail the command's reply.
		err = c.awaitNote("textDocument/publishDiagnostics", start.Add(timeout))
		t.first = time.Since(start)
	}
	return t, err
}

// awaitNote waits for a notification of method.
func (c *client) awaitNote(method string, deadline time.Time) error {
	err := c.await("", deadline, func(m message) bool { return m.Method == method })
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", method, err)
	}
	return nil
}

func (c *client) shutdown(timeout time.Duration) error {
	id, err := c.call("shutdown", nil)
	if err != nil {
		return err
	}
	if err := c.await(id, time.Now().Add(timeout), nil); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return c.notify("exit", nil)
}
