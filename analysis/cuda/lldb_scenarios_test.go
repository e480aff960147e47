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
	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
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

// TestManyThreadsStayBounded: 20,000 SMs that each stand in for an
// exception at one site, and 20,000 lanes at distinct pcs, read within the
// fuzz budget: the model lists at most MaxListedGPUThreads threads and
// aggregates the rest into bounded rows.
func TestManyThreadsStayBounded(t *testing.T) {
	fx, err := cudacoretest.NewFixture(filepath.Join(testdataDir, "cubins"))
	if err != nil {
		t.Fatal(err)
	}
	dev := &cudacoretest.Device{NumSMs: 20000, RegsPerLane: 4}
	for i := uint32(0); i < 20000; i++ {
		sm := &cudacoretest.SM{ID: i, Exception: 10, ErrorPC: fx.ErrorPC, ErrorPCValid: true}
		if i%2 == 1 { // a lane at its own pc: no stand-in, a row of its own
			w := &cudacoretest.Warp{Valid: 1, Active: 1, Lanes: []*cudacoretest.Lane{{PC: fx.LanePC + uint64(i)*16, Regs: []uint32{i}}}}
			sm.CTAs = []*cudacoretest.CTA{{GridID: 1, Block: [3]uint32{i, 0, 0}, Warps: []*cudacoretest.Warp{w}}}
		}
		dev.SMs = append(dev.SMs, sm)
	}
	core, err := (&cudacoretest.Core{Devices: []*cudacoretest.Device{dev}, Images: []cudacoretest.Image{{Data: fx.Relocated, Relocated: true}}}).Build()
	if err != nil {
		t.Fatal(err)
	}
	var g *model.GPU
	fuzzbudget.Check(t, len(core), fuzzbudget.Default, func() {
		c, err := cuda.ReadCrash("many.nvcudmp", bytes.NewReader(core))
		if err != nil {
			t.Fatal(err)
		}
		g = c.GPU
	})
	if g.ThreadCount != 20000 || len(g.Threads) != model.MaxListedGPUThreads || len(g.ThreadRows) != 64 ||
		g.ThreadRows[0].String() != "10000 thread(s): no kernel context, stop reason = CUDA Exception: Device Illegal Address" ||
		g.ThreadRowsOmitted == 0 {
		t.Fatalf("%d threads, %d listed, %d rows (%d omitted), first %v", g.ThreadCount, len(g.Threads), len(g.ThreadRows),
			g.ThreadRowsOmitted, g.ThreadRows[0])
	}
}
