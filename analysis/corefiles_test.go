package analysis_test

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// gunzipTo decompresses a checked-in gzip'd core (or any file) to dst:
// gdb reads cores only uncompressed.
func gunzipTo(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
}

// gunzipCore decompresses src into the test's temporary directory.
func gunzipCore(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "core")
	gunzipTo(t, src, dst)
	return dst
}

// readCore returns the uncompressed bytes of a native corpus core.
func readCore(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(gunzipCore(t, filepath.Join(corpus, "cores", name+".core.gz")))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
