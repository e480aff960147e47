package cuda

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/analysis/regular"
)

// TestOpenCubinRefusesNonRegular: a cubin path naming a FIFO (nothing
// writes to it) or a device is refused at once, never waited on or read
// without bound (issue 24: every path opened through analysis/regular).
func TestOpenCubinRefusesNonRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "kernel.cubin")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/zero"} {
		start := time.Now()
		_, err := OpenCubin(path)
		var notRegular *regular.NotRegularError
		if !errors.As(err, &notRegular) {
			t.Errorf("OpenCubin(%s) = %v, want a NotRegularError", path, err)
		}
		if _, _, err := OpenCubins(path); !errors.As(err, &notRegular) {
			t.Errorf("OpenCubins(%s) = %v, want a NotRegularError", path, err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: refused after %v", path, took)
		}
	}
}
