package server_test

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
	"github.com/faultline-dev/faultline/internal/lspframe"
)

// TestOpenCoreNamingStdin (issue 24 items 1, 2): faultline.open of a core
// whose mapped files name /dev/stdin (the server's own protocol stream), a
// FIFO, /dev/zero and a directory, with the mappings' first pages missing.
// The open is answered, and the server keeps its stream: a shutdown after
// it is answered and exit ends the server with status 0. Before, the
// module scan read 4 bytes of the protocol stream, the open got no answer
// and framing broke (exit 1).
func TestOpenCoreNamingStdin(t *testing.T) {
	core := boundtest.HostilePathsCore(t, t.TempDir())
	cmd := exec.Command(boundtest.Binary(t), "serve")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	open := fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{"command":"faultline.open","arguments":[{"dump":%q}]}}`, core)
	answers := make(chan [2]string, 1)
	go func() {
		out := bufio.NewReader(stdout)
		io.WriteString(stdin, lspframe.Frame(initRequest))
		readResponse(out, `"id":1`)
		io.WriteString(stdin, lspframe.Frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)+lspframe.Frame(open))
		a := readResponse(out, `"id":3`)
		io.WriteString(stdin, lspframe.Frame(shutdownRequest))
		answers <- [2]string{a, readResponse(out, `"id":2`)}
		io.WriteString(stdin, lspframe.Frame(`{"jsonrpc":"2.0","method":"exit"}`))
	}()
	select {
	case a := <-answers:
		if !strings.Contains(a[0], `"result"`) || !strings.Contains(a[1], `"result"`) {
			t.Errorf("open answered %q, shutdown %q: want both answered", a[0], a[1])
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no answer to the open within 20 s\nstderr: %s", stderr.String())
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve exited %v after shutdown and exit (framing broken?)\nstderr: %s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("serve did not exit after exit")
	}
}
