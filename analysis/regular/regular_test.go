package regular

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestRefusesWithoutBlocking: a FIFO nobody writes, a terminal-like
// device, a never-ending device, a directory and the process's own stdin
// (a pipe here) are refused by fstat, at once, before anything is read.
func TestRefusesWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	stdinLike := "/proc/self/fd/" + strconv.Itoa(int(r.Fd()))
	for _, tc := range []struct{ path, kind string }{
		{fifo, "a FIFO"}, {"/dev/zero", "a character device"}, {"/dev/null", "a character device"},
		{dir, "a directory"}, {stdinLike, "a FIFO"},
	} {
		start := time.Now()
		done := make(chan error, 1)
		go func() { _, _, err := Open(tc.path); done <- err }()
		select {
		case err := <-done:
			var nr *NotRegularError
			if !errors.As(err, &nr) || Kind(nr.Mode) != tc.kind {
				t.Errorf("Open(%s) = %v, want it refused as %s", tc.path, err, tc.kind)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Open(%s) blocked for %v", tc.path, time.Since(start))
		}
	}
	if _, err := ReadFile(fifo, 1<<20); err == nil {
		t.Errorf("ReadFile read a FIFO")
	}
}

// TestTerminal: a terminal (the pseudo-terminal multiplexer) is refused.
func TestTerminal(t *testing.T) {
	var nr *NotRegularError
	if _, _, err := Open("/dev/ptmx"); !errors.As(err, &nr) || Kind(nr.Mode) != "a character device" {
		t.Errorf("Open(/dev/ptmx) = %v, want it refused as a character device", err)
	}
}

func TestReadBounds(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(p, 9); !errors.As(err, &tl) || tl.Size != 10 || tl.Max != 9 {
		t.Errorf("ReadFile over its cap: %v", err)
	}
	b := make([]byte, 8)
	if n, err := ReadAt(p, b, 6); err != nil || string(b[:n]) != "6789" {
		t.Errorf("ReadAt(6) = %q, %v", b[:n], err)
	}
	if _, err := ReadAt(p, b, 10); err != io.EOF {
		t.Errorf("ReadAt past the end: %v", err)
	}
	// A /proc file reads as regular with size 0: nothing is read from it.
	if b, err := ReadFile("/proc/self/status", 1<<20); err != nil || len(b) != 0 {
		t.Errorf("ReadFile(/proc/self/status) = %d bytes, %v; want 0 (its fstat size)", len(b), err)
	}
}
