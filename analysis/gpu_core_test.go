package analysis_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/cuda"
	"github.com/faultline-dev/faultline/analysis/cuda/cudacoretest"
)

// The synthetic dump checked in by analysis/cuda's tests: a Warp Illegal
// Address at crash_kernel+0xc0 of testdata/cuda/cubins/kernels.sm_80.cubin,
// block (2,0,0) thread (101,0,0), rows as a newer driver writes them.
const syntheticGPUCore = "../testdata/cuda/cores/illegal_address.sm_80.nvcudmp.gz"

func TestOpenCUDACore(t *testing.T) {
	cubin, err := os.ReadFile("../testdata/cuda/cubins/kernels.sm_80.cubin")
	if err != nil {
		t.Fatal(err)
	}
	if cuda.IsCoreHeader(cubin) {
		t.Fatal("IsCoreHeader is true for a cubin")
	}
	c, err := analysis.Open(syntheticGPUCore, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := c.GPU
	if c.Dump.Format != "cuda-core" || c.Dump.Arch != "sm_80" || g == nil {
		t.Fatalf("dump %+v gpu %v", c.Dump, g)
	}
	if g.Kernel != "crash_kernel" || g.Exception != "Warp Illegal Address" || g.Offset != ".text.crash_kernel+0xc0" ||
		g.Block.String() != "(2,0,0)" || g.Thread.String() != "(101,0,0)" || g.GridDim.String() != "(4,1,1)" ||
		g.BlockDim.String() != "(128,1,1)" || *g.SM != 17 || *g.Warp != 3 || *g.Lane != 5 || g.HostThread != 4242 {
		b, _ := json.MarshalIndent(g, "", " ")
		t.Fatalf("gpu section:\n%s", b)
	}
	// The chain nvdisasm -gi prints for crash_kernel+0xc0 (see
	// testdata/cuda/ref/kernels.sm_80.nvdisasm.txt.gz), with functions.
	want := []string{
		"fl::load_global<int> access.cuh:8 true",
		"fl::Gather<fl::Scale>::operator() functors.cuh:19 true",
		"fl::for_each_item<fl::Gather<fl::Scale> > functors.cuh:28 true",
		"gather_rows<fl::Scale> kernels.cu:16 true",
		"crash_kernel kernels.cu:20 false",
	}
	var got []string
	for _, f := range g.Frames {
		got = append(got, f.Function+" "+filepath.Base(f.File)+":"+itoa(f.Line)+" "+boolString(f.Inlined))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("frames:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	levels := g.InlineLevels()
	if len(levels) != 5 || levels[1].Title(g.Kernel) != "inline level 2 of 5 in crash_kernel" {
		t.Errorf("inline levels: %+v", levels)
	}
	if c.Classification == nil || c.Classification.Kind != "gpu-illegal-address" {
		t.Errorf("classification: %+v", c.Classification)
	}
	if len(c.Modules) != 1 || c.Modules[0].Symbols != "lineinfo" {
		t.Errorf("modules: %+v", c.Modules)
	}
}

func TestOpenCUDACoreHang(t *testing.T) {
	cubin, err := os.ReadFile("../testdata/cuda/cubins/kernels.sm_90.cubin")
	if err != nil {
		t.Fatal(err)
	}
	const base = 0x7f00_0000_0000
	rel, err := cudacoretest.RelocateCubin(cubin, base)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := cuda.ParseCubin(rel)
	if err != nil {
		t.Fatal(err)
	}
	var entry uint64
	for _, f := range rc.Functions() {
		if f.Name == "spin_kernel" {
			entry = f.Addr
		}
	}
	b, err := cudacoretest.Build(cudacoretest.Spec{DeviceName: "NVIDIA H100 80GB HBM3", SMType: "sm_90", SMMajor: 9,
		GridID: 1, GridDim: [3]uint32{1, 1, 1}, BlockDim: [3]uint32{64, 1, 1}, PC: entry + 0x50, HostTID: 77,
		Cubin: cubin, Base: base, KernelEntry: entry, SkipNonRelocated: true})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hang.nvcudmp")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := analysis.Open(path, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.GPU.Kernel != "spin_kernel" || len(c.GPU.Frames) < 2 || c.GPU.Frames[0].Function != "keep_waiting" ||
		c.Classification == nil || c.Classification.Kind != "gpu-hang" {
		b, _ := json.MarshalIndent(c, "", " ")
		t.Errorf("hang dump:\n%s", b)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func boolString(v bool) string {
	if v {
		return "true"
	}
	return "false"
}
