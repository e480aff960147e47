package elfcore

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestPagerMatchesMapping reads every dumped byte of a real core through
// the pager (what OpenFile uses) and compares it with the file mapping,
// after the file OpenFile was given has been closed.
func TestPagerMatchesMapping(t *testing.T) {
	rc := realCore(t)
	f, err := os.Open(rc.core)
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenFile(f, rc.core)
	f.Close() // OpenFile's contract: f may be closed once it returns
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.pager == nil {
		t.Fatal("OpenFile did not read memory through a pager")
	}
	total := 0
	for _, s := range c.Segments {
		if s.Filesz == 0 {
			continue
		}
		got := make([]byte, s.Filesz)
		// An odd start and length, so that reads straddle pages.
		if n, err := c.ReadMemory(s.Vaddr+3, got[:s.Filesz-3]); n != int(s.Filesz-3) || err != nil {
			t.Fatalf("ReadMemory(%#x) = %d, %v", s.Vaddr+3, n, err)
		}
		if want := c.data[s.Offset+3 : s.Offset+s.Filesz]; !bytes.Equal(got[:s.Filesz-3], want) {
			t.Fatalf("segment at %#x: the pager's bytes differ from the file's", s.Vaddr)
		}
		total += int(s.Filesz)
	}
	if total < 1<<16 {
		t.Fatalf("only %d dumped bytes compared", total)
	}
}

// TestPagerTruncatedWhileOpen: a core cut short after it was opened gives
// a typed error on a read past the new end, not a crash.
func TestPagerTruncatedWhileOpen(t *testing.T) {
	rc := realCore(t)
	path := filepath.Join(t.TempDir(), "core")
	src, err := os.Open(rc.core)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	src.Close()
	c, err := OpenFile(dst, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	last := c.Segments[len(c.Segments)-1]
	for i := len(c.Segments) - 1; i >= 0 && last.Filesz == 0; i-- {
		last = c.Segments[i]
	}
	if err := dst.Truncate(int64(last.Offset)); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	var b [8]byte
	n, err := c.ReadMemory(last.Vaddr, b[:])
	var fe *FormatError
	if n != 0 || !errors.As(err, &fe) {
		t.Fatalf("ReadMemory past the truncated end = %d, %v; want a *FormatError", n, err)
	}
}
