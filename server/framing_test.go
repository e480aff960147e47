package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
	"github.com/faultline-dev/faultline/internal/lspframe"
)

func TestMain(m *testing.M) { os.Exit(boundtest.Main(m)) }

// LSP framing and stdio (issue 18 item 6), raw bytes into the real
// `faultline serve`.

const (
	initRequest     = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`
	shutdownRequest = `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`
)

// TestFramingErrorExits: after a frame whose framing is broken the server
// answers nothing more and exits non-zero at once, with its input still
// open (it used to skip the header, desynchronise, and drop every later
// request for up to 64 frames).
func TestFramingErrorExits(t *testing.T) {
	for _, tc := range []struct{ name, bad string }{
		{"length-not-a-number", "Content-Length: abc\r\n\r\n{}"},
		{"length-negative", "Content-Length: -5\r\n\r\n"},
		{"length-missing", "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}"},
		{"length-over-1GiB", "Content-Length: 1073741825\r\n\r\n"},
		{"body-longer-than-length", "Content-Length: 10\r\n\r\n" + `{"jsonrpc":"2.0","method":"initialized","params":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := lspframe.Frame(initRequest) + tc.bad + lspframe.Frame(shutdownRequest)
			r := boundtest.Run(t, boundtest.Cmd{Args: []string{"serve"}, Stdin: []byte(in), StdinOpen: true,
				Limits: boundtest.Limits{Wall: 20 * time.Second}})
			checkFramingExit(t, r)
		})
	}
}

// TestFramingShortBodyAtEOF: input that ends inside a frame's body (a
// Content-Length longer than what follows) ends the server non-zero, the
// request bytes swallowed by the body are not answered.
func TestFramingShortBodyAtEOF(t *testing.T) {
	in := lspframe.Frame(initRequest) + "Content-Length: 400\r\n\r\n{}" + lspframe.Frame(shutdownRequest)
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"serve"}, Stdin: []byte(in), Limits: boundtest.Limits{Wall: 20 * time.Second}})
	checkFramingExit(t, r)
}

func checkFramingExit(t *testing.T, r boundtest.Result) {
	t.Helper()
	if r.Killed != "" || r.Exit == 0 {
		t.Fatalf("want a non-zero exit on its own; got %v\nstderr: %s", r, r.Stderr)
	}
	if strings.Contains(r.Stdout, `"id":2`) {
		t.Errorf("the request after the bad frame was answered; stdout: %s", r.Stdout)
	}
	if !strings.Contains(r.Stderr, "LSP framing error") {
		t.Errorf("stderr does not name the framing error: %s", r.Stderr)
	}
	if r.Wall > 15*time.Second {
		t.Errorf("bound: exit within 15 s (a server that keeps reading never exits); got %v", r)
	}
}

// TestOpenFIFORefusedAndEOFExits: faultline.open of a FIFO (which nobody
// writes) is refused at once, and the server exits when its input ends.
// Before, the open blocked in open(2) and `serve` outlived its client.
func TestOpenFIFORefusedAndEOFExits(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "core.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
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
	open := fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{"command":"faultline.open","arguments":[{"dump":%q}]}}`, fifo)
	answer := make(chan string, 1)
	go func() {
		// Requests run concurrently: the open goes out once initialize is answered.
		out := bufio.NewReader(stdout)
		io.WriteString(stdin, lspframe.Frame(initRequest))
		readResponse(out, `"id":1`)
		io.WriteString(stdin, lspframe.Frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)+lspframe.Frame(open))
		answer <- readResponse(out, `"id":3`)
	}()
	select {
	case a := <-answer:
		if !strings.Contains(a, "is not a regular file (a FIFO)") {
			t.Errorf("the open of a FIFO was not refused: %s", a)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("no answer to the open of a FIFO within 10 s")
	}
	start := time.Now()
	stdin.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("serve exited 0 when its input ended without shutdown/exit")
		}
		t.Logf("serve exited %v after its input ended, in %v", err, time.Since(start))
	case <-time.After(5 * time.Second):
		t.Fatalf("bound: serve did not exit within 5 s of its input ending\nstderr: %s", stderr.String())
	}
}

// readResponse reads LSP frames until one contains want and returns it
// ("" at the end of the stream).
func readResponse(r *bufio.Reader, want string) string {
	for {
		body, err := lspframe.Read(r)
		if err != nil {
			return ""
		}
		if strings.Contains(string(body), want) {
			return string(body)
		}
	}
}

// TestFramingWithVSCodeClient: the same broken frames written between the
// messages of Microsoft's vscode-languageserver-protocol client
// (server/conformance/framing.js).
func TestFramingWithVSCodeClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: the protocol-client test needs Node.js 18+ (apt-get install nodejs npm)")
	}
	conf, err := filepath.Abs("conformance")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(conf, "node_modules", "vscode-languageserver-protocol", "package.json")); err != nil {
		t.Fatal("vscode-languageserver-protocol is not installed: run `npm ci --prefix server/conformance`")
	}
	bin := boundtest.Binary(t)
	for _, bad := range []string{"Content-Length: abc\r\n\r\n{}", "Content-Length: -5\r\n\r\n", "Content-Length: 2000000000\r\n\r\n",
		"Content-Type: application/vscode-jsonrpc\r\n\r\n{}", "Content-Length: 3\r\n\r\n{\"jsonrpc\":\"2.0\"}"} {
		arg, _ := json.Marshal(bad)
		out, err := exec.Command(node, filepath.Join(conf, "framing.js"), bin, string(arg)).CombinedOutput()
		t.Logf("node framing.js %s:\n%s", arg, out)
		if err != nil {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
