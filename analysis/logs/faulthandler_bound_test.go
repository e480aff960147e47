package logs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// TestBoundDecoyThreadsKeepCurrent (issue 24 item 12): a faulthandler dump
// with 5,000 decoy threads printed before the crashing one: the thread cap
// (4,096) must not hide the "Current thread", whose frame is the crash.
func TestBoundDecoyThreadsKeepCurrent(t *testing.T) {
	var b strings.Builder
	b.WriteString("Fatal Python error: Segmentation fault\n\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "Thread 0x%016x (most recent call first):\n  File \"decoy.py\", line %d in idle\n\n", 0x7f0000000000+i, i+1)
	}
	b.WriteString("Current thread 0x00007fffdeadbeef (most recent call first):\n  File \"crash.py\", line 3 in boom\n  File \"crash.py\", line 7 in <module>\n")
	in := b.String()
	log, err := ParseFaulthandler(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	last := log.Threads[len(log.Threads)-1]
	if len(log.Threads) != maxPyThreads || !last.Current || last.Frames[0].Function != "boom" {
		t.Errorf("%d threads, the last %+v: want %d with the current thread kept", len(log.Threads), last, maxPyThreads)
	}
	path := filepath.Join(t.TempDir(), "job.log")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", path}, Limits: boundtest.Limits{Wall: 30 * time.Second}})
	c := boundtest.Crash(t, r)
	th := c.CrashingThread()
	if th == nil || len(th.Frames) == 0 || th.Frames[0].Function != "boom" || th.Frames[0].File != "crash.py" {
		t.Errorf("the crashing thread is not the current one (boom in crash.py): %+v", th)
	}
	if r.MaxRSSKiB > 128<<10 {
		t.Errorf("bound: maxrss <= 128 MiB; got %v", r)
	}
}
