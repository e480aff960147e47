package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/faultline-dev/faultline/server"
)

// BenchmarkServer prints (never asserts) the time from faultline.open to the
// first diagnostic, then codeLens / hover / inlayHint latency percentiles
// over the in-memory connection, on the core-engine benchmark core when
// FAULTLINE_BENCH_CORPUS names the directory bench/corpus.sh prints (its
// cores/1g/core and bigjob), else on testdata's threads64 core.
//
//	go test ./server -run '^$' -bench Server -benchtime 1x
func BenchmarkServer(b *testing.B) {
	for b.Loop() {
		benchOnce(b)
	}
}

func benchOnce(b *testing.B) {
	init := map[string]any{}
	dir := os.Getenv("FAULTLINE_BENCH_CORPUS")
	if dir != "" {
		// The corpus's DWARF names its sources "src/unit_NNN.cpp".
		init["sourceMap"] = map[string]string{"src/": filepath.Join(dir, "src") + "/"}
	}
	e := newEnv(b, init, server.Options{})
	core, exe, label := filepath.Join(e.Folder, "cores/threads64.core.gz"), filepath.Join(e.Folder, "bin/threads64"), "threads64 (testdata)"
	if dir != "" {
		core, exe, label = filepath.Join(dir, "cores/1g/core"), filepath.Join(dir, "bigjob"), "benchmark corpus 1 GiB core"
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- e.Execute(server.CommandOpen, map[string]string{"dump": core, "exe": exe}, nil) }()
	e.Await("first diagnostic", func(c *fakeClient) bool { return len(c.diagLog) > 0 })
	first := time.Since(start)
	if err := <-done; err != nil {
		b.Fatalf("open %s: %v", core, err)
	}
	loaded := time.Since(start)

	e.Client.mu.Lock()
	target := e.Client.diagLog[0]
	e.Client.mu.Unlock()
	var line uint32
	for _, d := range e.Diagnostics(target) {
		if d.Severity == protocol.DiagnosticSeverityError {
			line = d.Range.Start.Line
		}
	}
	doc := protocol.TextDocumentIdentifier{URI: target}
	const n = 1000
	lat := func(name string, f func() error) {
		ds := make([]time.Duration, n)
		for i := range ds {
			t0 := time.Now()
			if err := f(); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			ds[i] = time.Since(t0)
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		fmt.Printf("  %-10s p50 %8v  p99 %8v  (n=%d)\n", name, ds[n/2].Round(time.Microsecond), ds[n*99/100].Round(time.Microsecond), n)
	}
	fmt.Printf("faultline serve on %s (%s):\n  open → first diagnostic %v, open → loaded %v\n",
		label, filepath.Base(target.FsPath()), first.Round(time.Millisecond), loaded.Round(time.Millisecond))
	lat("codeLens", func() error {
		_, err := e.Server.CodeLens(e.ctx, &protocol.CodeLensParams{TextDocument: doc})
		return err
	})
	lat("hover", func() error {
		_, err := e.Server.Hover(e.ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
			TextDocument: doc, Position: protocol.Position{Line: line}}})
		return err
	})
	lat("inlayHint", func() error {
		_, err := e.Server.InlayHint(e.ctx, &protocol.InlayHintParams{TextDocument: doc,
			Range: protocol.Range{End: protocol.Position{Line: line + 100}}})
		return err
	})
	e.Shutdown()
}
