package cuda_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/cuda"
	"github.com/faultline-dev/faultline/analysis/cuda/cudacoretest"
)

// TestLLDBScenarios reads the core of every test method of LLDB's
// nvgpu-core tests (TestNVGPUArtificialMalformed,
// TestNVGPUArtificialSMException, TestNVGPUCoreFileComparison; see
// cudacoretest.Scenarios) and checks the crash model against what the
// method asserts: the same refusal, or the same threads, names, stop
// reasons, selected thread, exception, errorPC, frame, coordinates,
// launch dimensions, registers and aggregated rows.
func TestLLDBScenarios(t *testing.T) {
	fx, err := cudacoretest.NewFixture(filepath.Join(testdataDir, "cubins"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range cudacoretest.Scenarios(fx) {
		t.Run(sc.Name(), func(t *testing.T) {
			core, err := sc.Core.Build()
			if err != nil {
				t.Fatal(err)
			}
			c, err := cuda.ReadCrash(sc.Method+".nvcudmp", bytes.NewReader(core))
			if len(sc.Want.Refused) > 0 {
				var he *cuda.HierarchyError
				if !errors.As(err, &he) {
					t.Fatalf("read: %v, want a HierarchyError", err)
				}
				for _, s := range sc.Want.Refused {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("refused with %q, want it to say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range sc.Want.Check(c) {
				t.Error(d)
			}
		})
	}
}

// TestMissingGridRowKeepsLaneState: a CTA whose grid has no row loses
// only the launch dimensions (read as zero); pc, errorPC, block and
// thread survive (the scaffold of TestNVGPUArtificialMalformed has no grid
// row; here a dump otherwise whole).
func TestMissingGridRowKeepsLaneState(t *testing.T) {
	s := lldbSpec(t)
	s.NoGrid = true
	c, err := cuda.ReadCrash("nogrid.nvcudmp", bytes.NewReader(buildCore(t, s)))
	if err != nil {
		t.Fatal(err)
	}
	g := c.GPU
	if g.Exception != "Warp Illegal Address" || g.ErrorPC == "" || g.Block.String() != "(2,0,0)" ||
		g.Thread.String() != "(101,0,0)" || g.GridDim.String() != "(0,0,0)" || g.BlockDim.String() != "(0,0,0)" ||
		g.Kernel != "crash_kernel" || len(g.Frames) != 5 || g.Launch() != "" {
		t.Fatalf("gpu %+v", g)
	}
}

func lldbSpec(t *testing.T) cudacoretest.Spec {
	t.Helper()
	cubin := readCubin(t, "kernels.sm_80.cubin")
	spec, _ := illegalAddressSpec(t, cubin, cudacoretest.RowSizes{})
	return spec
}

func buildCore(t *testing.T, s cudacoretest.Spec) []byte {
	t.Helper()
	b, err := cudacoretest.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readCubin(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdataDir, "cubins", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
