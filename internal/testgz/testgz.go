// Package testgz reads the gzip'd test data checked into the repository
// (cores, nvdisasm listings) for the tests of every package: decompressed to
// a file for the tools that read only plain files (gdb, the binary), or as a
// stream for a parser.
package testgz

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Gunzip decompresses the gzip'd file src into dst.
func Gunzip(t testing.TB, src, dst string) {
	t.Helper()
	zr := Open(t, src)
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		out.Close()
		t.Fatalf("%s: %v", src, err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// GunzipTemp decompresses the gzip'd file src into a file called name in the
// test's temporary directory and returns its path.
func GunzipTemp(t testing.TB, src, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	Gunzip(t, src, dst)
	return dst
}

// Open returns the decompressed contents of the gzip'd file src as a
// stream; the file is closed when the test ends.
func Open(t testing.TB, src string) io.Reader {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return zr
}
