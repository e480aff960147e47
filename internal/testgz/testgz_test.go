package testgz

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestGunzipAndOpen(t *testing.T) {
	want := bytes.Repeat([]byte("faultline core bytes\n"), 1000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(want)
	zw.Close()
	src := filepath.Join(t.TempDir(), "x.core.gz")
	if err := os.WriteFile(src, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(GunzipTemp(t, src, "core"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("GunzipTemp: %d bytes, %v; want %d bytes", len(got), err, len(want))
	}
	if got, err := io.ReadAll(Open(t, src)); err != nil || !bytes.Equal(got, want) {
		t.Errorf("Open: %d bytes, %v; want %d bytes", len(got), err, len(want))
	}
}
