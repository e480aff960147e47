package cuda_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis/cuda/cudacoretest"
)

// TestWriteFuzzSeedCore writes the GPU core seed of FuzzParseCoreDump when
// FAULTLINE_UPDATE is set.
func TestWriteFuzzSeedCore(t *testing.T) {
	if os.Getenv("FAULTLINE_UPDATE") == "" {
		t.Skip("FAULTLINE_UPDATE=1 rewrites testdata/fuzz/FuzzParseCoreDump/synthetic_rdc")
	}
	cubin, err := os.ReadFile(filepath.Join(testdataDir, "cubins", "rdc_a.sm_80.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	const base = 0x7000_0000
	entry := kernelAddr(t, cubin, base, "rdc_kernel")
	b, err := cudacoretest.Build(cudacoretest.Spec{DeviceName: "GPU", SMType: "sm_80", GridID: 1,
		GridDim: [3]uint32{1, 1, 1}, BlockDim: [3]uint32{32, 1, 1}, Exception: 14, ErrorPC: entry + 0x80,
		Cubin: cubin, Base: base, KernelEntry: entry, SkipNonRelocated: true})
	if err != nil {
		t.Fatal(err)
	}
	corpus := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
	if err := os.WriteFile("testdata/fuzz/FuzzParseCoreDump/synthetic_rdc", []byte(corpus), 0o644); err != nil {
		t.Fatal(err)
	}
}
