// Command lspfirst times `faultline serve` the way an editor meets it: it
// starts the server as a subprocess, speaks LSP over its stdin and stdout
// (initialize, initialized), then runs faultline.open on a core and
// measures the time until the first textDocument/publishDiagnostics
// notification, and until the open command returns. With -runs N it opens
// the core N times in the same server (the first open fills the index
// cache when it was empty: "cold"; the later ones are "warm").
//
// Usage:
//
//	lspfirst -faultline PATH -core CORE [-exe EXE] [-root DIR] [-runs 3]
//
// It prints one line per open and exits 1 when the server fails, sends no
// diagnostic, or takes longer than -timeout.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	bin := flag.String("faultline", "faultline", "the faultline binary")
	core := flag.String("core", "", "the core to open (required)")
	exe := flag.String("exe", "", "its executable")
	root := flag.String("root", ".", "the workspace folder")
	runs := flag.Int("runs", 3, "opens of the core in one server")
	timeout := flag.Duration("timeout", 2*time.Minute, "give up after this long per open")
	flag.Parse()
	if *core == "" {
		fmt.Fprintln(os.Stderr, "usage: lspfirst -faultline PATH -core CORE [-exe EXE] [-root DIR] [-runs N]")
		os.Exit(2)
	}
	times, err := measure(*bin, *root, *core, *exe, *runs, *timeout)
	for i, t := range times {
		fmt.Printf("lspfirst: open %d: first diagnostic %.1f ms, open returned %.1f ms\n", i+1, ms(t.first), ms(t.done))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lspfirst:", err)
		os.Exit(1)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
