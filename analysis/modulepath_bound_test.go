package analysis_test

import (
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/boundtest"
)

// A core whose mapped files (NT_FILE) name what must never be read (issue
// 24 items 1, 2; boundtest.HostilePathsCore): /dev/stdin, a FIFO, a device,
// a directory, with the mappings' first pages missing from the core.

// TestBoundModulePathsNeverRead: analyze on that core, its stdin a pipe
// that stays open (as under a server), finishes at once and reads no file
// the core names but regular ones.
func TestBoundModulePathsNeverRead(t *testing.T) {
	core := boundtest.HostilePathsCore(t, t.TempDir())
	r := boundtest.Run(t, boundtest.Cmd{Args: []string{"analyze", "--json", "--offline", core}, Stdin: []byte("not for the core\n"), StdinOpen: true,
		Limits: boundtest.Limits{Wall: 30 * time.Second}})
	c := boundtest.Crash(t, r)
	if r.Killed != "" || r.Exit != 0 || r.Wall > 10*time.Second || len(c.Threads) != 1 {
		t.Errorf("bound: analyze ends within 10 s with the core's thread; got %v, %d threads\n%s", r, len(c.Threads), r.Stderr)
	}
}
