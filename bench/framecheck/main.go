// Command framecheck compares faultline's backtraces with gdb's, frame for
// frame, on the same core.
//
// It reads the JSON that `faultline analyze --json` prints (schema
// faultline.crash/v1) and the text of `gdb -batch -ex 'thread apply all bt'`
// (parsed with analysis/logs), matches threads by LWP, and prints how many
// threads and frames agree on function, file and line. It exits 1 when the
// crashing thread disagrees (or is missing), 2 on unreadable input, and 0
// otherwise; disagreements in other threads are reported but do not fail.
//
// Usage:
//
//	framecheck -faultline out.json -gdb gdb.txt [-diffs 10]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/logs"
)

func main() {
	fl := flag.String("faultline", "", "faultline analyze --json output (required)")
	gdb := flag.String("gdb", "", "gdb 'thread apply all bt' output (required)")
	diffs := flag.Int("diffs", 10, "print at most this many differing frames")
	flag.Parse()
	if *fl == "" || *gdb == "" {
		fmt.Fprintln(os.Stderr, "usage: framecheck -faultline out.json -gdb gdb.txt [-diffs N]")
		os.Exit(2)
	}
	crash, err := readCrash(*fl)
	if err != nil {
		fmt.Fprintln(os.Stderr, "framecheck:", err)
		os.Exit(2)
	}
	gl, err := readGDB(*gdb)
	if err != nil {
		fmt.Fprintln(os.Stderr, "framecheck:", err)
		os.Exit(2)
	}
	res := Compare(crash, gl)
	res.Print(os.Stdout, *diffs)
	if !res.CrashOK() {
		os.Exit(1)
	}
}

// maxInput caps how much of either input is read (a 256-thread backtrace is
// a few MiB; anything near this is not a backtrace).
const maxInput = 1 << 30

func readCrash(path string) (*analysis.Crash, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var c analysis.Crash
	if err := json.NewDecoder(io.LimitReader(f, maxInput)).Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Schema != analysis.Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, c.Schema, analysis.Schema)
	}
	return &c, nil
}

func readGDB(path string) (*logs.GDBLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gl, err := logs.ParseGDB(io.LimitReader(f, maxInput))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(gl.Threads) == 0 {
		return nil, fmt.Errorf("%s: no threads in gdb output", path)
	}
	return gl, nil
}
