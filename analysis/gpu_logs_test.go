package analysis_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/logs"
)

func TestOpenGPULogs(t *testing.T) {
	const dir = "logs/testdata/gpu/"
	cases := []struct {
		file, format, kind, kernel string
		frames                     int
	}{
		{"memcheck.txt", "compute-sanitizer", "gpu-illegal-address", "crash_kernel", 4},
		{"cudagdb.txt", "cuda-gdb", "gpu-illegal-address", "void fl::for_each_item<fl::Gather<fl::Scale> >", 1},
		{"torch.txt", "pytorch-cuda", "gpu-illegal-address", "", 0},
	}
	for _, tc := range cases {
		c, err := analysis.Open(dir+tc.file, analysis.Options{})
		if err != nil {
			t.Fatal(err)
		}
		g := c.GPU
		if c.Dump.Format != tc.format || len(g.Frames) != tc.frames {
			t.Errorf("%s: format %s, %d gpu frames", tc.file, c.Dump.Format, len(g.Frames))
		}
		if tc.kernel != "" && len(g.Kernel) < len(tc.kernel) || g.Kernel[:min(len(g.Kernel), len(tc.kernel))] != tc.kernel {
			t.Errorf("%s: kernel %q", tc.file, g.Kernel)
		}
		if c.Classification == nil || c.Classification.Kind != tc.kind {
			t.Errorf("%s: classification %+v", tc.file, c.Classification)
		}
	}
	c, err := analysis.Open(dir+"torch.txt", analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.GPU.Notes) == 0 || len(c.Threads) != 1 || c.Threads[0].Frames[0].Line != 461 {
		t.Errorf("torch: notes %q threads %+v", c.GPU.Notes, c.Threads)
	}
	cubin, err := os.ReadFile("../testdata/cuda/cubins/kernels.sm_80.cubin")
	if err != nil {
		t.Fatal(err)
	}
	if logs.GPULogFormat(cubin) != "" {
		t.Error("a cubin is a GPU log")
	}
}

// A compressed log reads like the plain one: the input is decompressed
// once, before any format is sniffed (a gzip'd compute-sanitizer log used
// to be rejected as "a text file with no crash").
func TestOpenCompressedGPULog(t *testing.T) {
	const plainPath = "logs/testdata/gpu/memcheck.txt"
	data, err := os.ReadFile(plainPath)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	path := filepath.Join(t.TempDir(), "memcheck.txt.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	plain, err := analysis.Open(plainPath, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gz, err := analysis.Open(path, analysis.Options{})
	if err != nil {
		t.Fatalf("gzip'd compute-sanitizer log: %v", err)
	}
	if gz.Dump.Path != path || gz.Dump.Format != "compute-sanitizer" {
		t.Errorf("dump %+v", gz.Dump)
	}
	gz.Dump.Path = plain.Dump.Path
	a, _ := json.Marshal(plain)
	b, _ := json.Marshal(gz)
	if !bytes.Equal(a, b) {
		t.Errorf("the gzip'd log reads differently:\n%s\nwant:\n%s", b, a)
	}
}
