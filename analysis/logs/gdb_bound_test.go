package logs

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

func TestMain(m *testing.M) { os.Exit(boundtest.Main(m)) }

// TestBoundHugeGDBLog (issue 18 item 9): a gdb backtrace of 2,200,000
// frames (a 143 MB log, written gzip'd) is read by the real binary as a
// partial result, capped at maxFrames with the thread marked truncated and
// a problem, in bounded memory. It used to keep 2 M frames (1 GB) and then
// reject the log as holding no crash.
func TestBoundHugeGDBLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.gdb.txt.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	w := bufio.NewWriter(zw)
	fmt.Fprint(w, "Program received signal SIGSEGV, Segmentation fault.\n(gdb) bt\n")
	for i := range 2200000 {
		fmt.Fprintf(w, "#%d  0x0000555555555139 in recurse (n=%d) at /tmp/r.c:5\n", i, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	f.Close()
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", path}, Limits: boundtest.Limits{Wall: 90 * time.Second, RSSKiB: 1536 << 10}})
	if r.Killed != "" || r.Exit != 0 {
		t.Fatalf("%v\n%s", r, r.Stderr)
	}
	c := boundtest.Crash(t, r)
	if len(c.Threads) != 1 || len(c.Threads[0].Frames) != maxFrames || c.Threads[0].Truncated == "" || !boundtest.HasProblem(c, "larger than faultline reads") {
		t.Errorf("want one thread of %d frames, truncated, with a problem; got %d threads, problems %v", maxFrames, len(c.Threads), c.Problems)
	}
	if r.MaxRSSKiB > 600<<10 || r.CPUTime > 40*time.Second {
		t.Errorf("bound: maxrss <= 600 MiB, cpu <= 40 s; got %v", r)
	}
}
