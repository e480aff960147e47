package analysis

import (
	"testing"
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
		if !IsGPULog(dir + tc.file) {
			t.Errorf("%s: not recognized", tc.file)
			continue
		}
		c, err := openGPULog(dir + tc.file)
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
	c, err := openGPULog(dir + "torch.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.GPU.Notes) == 0 || len(c.Threads) != 1 || c.Threads[0].Frames[0].Line != 461 {
		t.Errorf("torch: notes %q threads %+v", c.GPU.Notes, c.Threads)
	}
	if IsGPULog("../testdata/cuda/cubins/kernels.sm_80.cubin") {
		t.Error("a cubin is a GPU log")
	}
}
