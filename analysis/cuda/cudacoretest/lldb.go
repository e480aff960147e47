package cudacoretest

import (
	"os"
	"path/filepath"
)

// The scenarios of LLDB's nvgpu-core tests, one per test method of the
// classes TestNVGPUArtificialMalformed, TestNVGPUArtificialSMException and
// TestNVGPUCoreFileComparison (lldb/test/API/gpu/nvidia/corefiles and
// .../comparison in LLDB's GPU branch), built as cores with this package
// from the shape each test method describes, with what that method
// asserts. The cores carry this repository's cubins (testdata/cuda)
// where LLDB's carry its fixtures (elfv8.cubin, comparison_artificial
// .cubin): relocated as the driver loads them, and unrelocated beside
// them where the test adds one. The readers' tests (analysis/cuda, the
// analyze command, the debug adapter) check their own view of Want.

// Scenario is one LLDB test method as a core and its expectations.
type Scenario struct {
	Class, Method string
	Core          *Core
	Want          Want
}

// Name is "Class.Method".
func (s Scenario) Name() string { return s.Class + "." + s.Method }

// Want is what the LLDB test method asserts, in reader-neutral terms.
type Want struct {
	// Refused: loading fails with an error naming each of these.
	Refused []string
	// Threads are every GPU thread, in LLDB's order, with its stop
	// description ("" for none).
	Threads []WantThread
	// Selected is the thread a debugger stops on; Exception its exception.
	Selected, Exception string
	// ErrorPC is the selected thread's errorPC, HasErrorPC whether it has
	// one; FramePC and Function its frame 0 (Function "": not symbolized).
	ErrorPC, FramePC uint64
	HasErrorPC       bool
	Function         string
	// Where the selected thread is (nil: not a lane; LLDB refuses the
	// built-in registers threadIdx, blockIdx, blockDim, gridDim).
	Block, Thread, BlockDim, GridDim *[3]uint32
	Lane                             *uint32
	SM                               uint32
	// Registers read these values on the selected thread; OnlyRegisters
	// says no other register reads.
	Registers     map[string]uint64
	OnlyRegisters bool
	// Rows are lines of the aggregated thread list (LLDB's `thread list`).
	Rows []string
	// Memory: global memory the dump holds (address → bytes) and
	// addresses it does not hold.
	Memory   map[uint64][]byte
	NoMemory []uint64
}

// WantThread is one expected thread.
type WantThread struct{ Name, Stop string }

// Fixture is the code the scenarios carry: kernels.sm_80.cubin relocated
// at 0x7fffcf280000 (where LLDB's elfv8.cubin fixture sits), with a lane
// pc and an errorPC inside crash_kernel's inline tower, and
// kernels.sm_90.cubin relocated at 0x7fffcf200000 for the comparison.
type Fixture struct {
	Cubin, Relocated []byte
	LanePC, ErrorPC  uint64
	ErrorFunction    string // innermost function at ErrorPC
	Cubin90, Reloc90 []byte
	KernelPC         uint64
	KernelFunction   string
}

// NewFixture reads the cubins from testdata/cuda/cubins under dir.
func NewFixture(cubins string) (Fixture, error) {
	var fx Fixture
	var err error
	if fx.Cubin, err = os.ReadFile(filepath.Join(cubins, "kernels.sm_80.cubin")); err != nil {
		return fx, err
	}
	if fx.Cubin90, err = os.ReadFile(filepath.Join(cubins, "kernels.sm_90.cubin")); err != nil {
		return fx, err
	}
	if fx.Relocated, err = RelocateCubin(fx.Cubin, 0x7fff_cf28_0000); err != nil {
		return fx, err
	}
	if fx.Reloc90, err = RelocateCubin(fx.Cubin90, 0x7fff_cf20_0000); err != nil {
		return fx, err
	}
	entry, err := SymbolAddress(fx.Relocated, "crash_kernel")
	if err != nil {
		return fx, err
	}
	// crash_kernel+0xc0 is the load in fl::load_global<int>, five inline
	// levels deep (testdata/cuda/ref/kernels.sm_80.nvdisasm.txt.gz).
	fx.LanePC, fx.ErrorPC, fx.ErrorFunction = entry+0x80, entry+0xc0, "fl::load_global<int>"
	if fx.KernelPC, err = SymbolAddress(fx.Reloc90, "crash_kernel"); err != nil {
		return fx, err
	}
	fx.KernelFunction = "crash_kernel"
	return fx, nil
}

// CUDBGException_t values (cudadebugger.h) the scenarios use.
const (
	excWarpIllegalInstruction = 4
	excWarpOutOfRangeAddress  = 5
	excDeviceIllegalAddress   = 10
)

const (
	stopWII = "CUDA Exception: Warp Illegal Instruction"
	stopDIA = "CUDA Exception: Device Illegal Address"
	stopWOR = "CUDA Exception: Warp Out-of-range Address"
)

func ptr[T any](v T) *T { return &v }

// Scenarios are the LLDB test methods as cores, in the order of the tests.
func Scenarios(fx Fixture) []Scenario {
	var out []Scenario
	out = append(out, malformedScenarios()...)
	out = append(out, smExceptionScenarios(fx)...)
	return append(out, comparisonScenarios(fx)...)
}
