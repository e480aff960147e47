package server_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestVSCodeProtocolClient builds the faultline binary and drives
// `faultline serve` over stdio with Microsoft's vscode-languageserver-protocol
// client (server/conformance/client.js, versions pinned by its
// package-lock.json). It needs node and `npm ci --prefix server/conformance`.
func TestVSCodeProtocolClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs node")
	}
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
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "faultline")
	build := exec.Command(goTool, "build", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, node, filepath.Join(conf, "client.js"), bin, testdataDir(t))
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("node client.js:\n%s", out.String())
	if err != nil {
		t.Fatalf("protocol client: %v", err)
	}
}
