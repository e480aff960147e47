package boundtest

import (
	"testing"
)

// TestMaxRSSIsTheBinarys: the peak memory reported for a run is the
// binary's own, however large the test process is. Measured on a direct
// child of a Go process it was the test process's (Go starts children with
// vfork and exec records the parent's peak RSS into the child's): a ROCm
// bound test read 370 MiB for a run of a few MiB.
func TestMaxRSSIsTheBinarys(t *testing.T) {
	ballast := make([]byte, 400<<20)
	for i := range ballast {
		if i%4096 == 0 {
			ballast[i] = 1
		}
	}
	r := Run(t, Cmd{Args: []string{"version"}})
	if r.Exit != 0 {
		t.Fatalf("faultline version: %v\n%s", r, r.Stderr)
	}
	if r.MaxRSSKiB <= 0 || r.MaxRSSKiB > 100<<10 {
		t.Errorf("faultline version: maxrss %d KiB with a 400 MiB test process; want the binary's own (under 100 MiB)", r.MaxRSSKiB)
	}
	if ballast[4096] != 1 {
		t.Fatal("ballast")
	}
}

// TestKilledIsMinusOne: a run the watchdog kills reads exit -1 and says why.
func TestKilledIsMinusOne(t *testing.T) {
	r := Run(t, Cmd{Args: []string{"serve"}, StdinOpen: true, Limits: Limits{Wall: 2e9}})
	if r.Exit != -1 || r.Killed == "" {
		t.Errorf("serve with stdin open past the 2 s limit: %v; want killed, exit -1", r)
	}
}
