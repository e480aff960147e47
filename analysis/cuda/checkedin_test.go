package cuda_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis/cuda/cudacoretest"
)

// TestCheckedInSyntheticCores keeps testdata/cuda/cores in step with the
// builder: the editor and analysis tests open these files. Set
// FAULTLINE_UPDATE=1 to rewrite them.
func TestCheckedInSyntheticCores(t *testing.T) {
	cubin, err := os.ReadFile(filepath.Join(testdataDir, "cubins", "kernels.sm_80.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := illegalAddressSpec(t, cubin, rowLayouts["grown"])
	want, err := cudacoretest.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(testdataDir, "cores", "illegal_address.sm_80.nvcudmp.gz")
	if os.Getenv("FAULTLINE_UPDATE") != "" {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(want)
		zw.Close()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (FAULTLINE_UPDATE=1 writes it)", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: FAULTLINE_UPDATE=1 go test ./analysis/cuda -run TestCheckedInSyntheticCores", path)
	}
}
