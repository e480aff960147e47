package cudacoretest

import "fmt"

// TestNVGPUCoreFileComparison: LLDB and cuda-gdb load the same artificial
// core and agree on it. (Its second method, test_compare_live_core,
// compares backtraces of a core a live GPU wrote; it has no artificial
// core.)

const comparison = "TestNVGPUCoreFileComparison"

// Register values of the comparison core's thread t, as the test writes
// them into the leaves: every R, UR, P and UP distinct per thread.
func regValue(t, i uint32) uint32  { return 0x0A000000 | t<<16 | i }
func uregValue(t, i uint32) uint32 { return 0x0B000000 | t<<16 | i }
func predValue(t, i uint32) uint32 { return flag((i+t)%2 == 0) }
func upredValue(t, i uint32) uint32 {
	return flag((i/2+t)%2 == 0)
}

// comparisonScenarios is test_compare_artificial_core: an sm_80 device of
// four SMs running grid 1 <<<(4,1,1), (1,1,1)>>> (context 0x1000, the
// relocated cubin below module 0x2000), one block per SM with one thread
// at threadIdx (0,0,0), every lane at the kernel's entry with a full
// register file (255 R, 255 UR, 8 P, 8 UP); only SM 0 records
// WARP_ILLEGAL_INSTRUCTION, with the errorPC in its warp. Both debuggers
// list the four threads; exactly one — SM 0's, blockIdx (0,0,0) — has a
// stop reason, and its registers read the values written.
func comparisonScenarios(fx Fixture) []Scenario {
	mod := &Module{Handle: 0x2000}
	dev := &Device{Name: "cmp_device", SMType: "sm_80", SMMajor: 8, NumSMs: 4, WarpsPerSM: 1, LanesPerWarp: 32,
		RegsPerLane: 255, PredicatesPerLane: 8, UniformRegs: 255, UniformPredicates: 8, InstructionSize: 16,
		Contexts: []*Context{{ID: 0x1000, Modules: []*Module{mod}}},
		Grids: []*Grid{{ID: 1, ContextID: 0x1000, ModuleHandle: 0x2000, GridDim: [3]uint32{4, 1, 1},
			BlockDim: [3]uint32{1, 1, 1}, Status: 3}}}
	want := Want{Selected: laneName(0), Exception: "Warp Illegal Instruction", ErrorPC: fx.KernelPC, HasErrorPC: true,
		FramePC: fx.KernelPC, Function: fx.KernelFunction, Block: &[3]uint32{}, Thread: &[3]uint32{},
		BlockDim: &[3]uint32{1, 1, 1}, GridDim: &[3]uint32{4, 1, 1}, Lane: ptr(uint32(0)),
		Registers: map[string]uint64{"PC": fx.KernelPC, "errorPC": fx.KernelPC, "RZ": 0, "URZ": 0}}
	for b := uint32(0); b < 4; b++ {
		sm := &SM{ID: b}
		w := &Warp{Valid: 1, Active: 1, URegs: seq(255, b, uregValue), UPreds: seq(8, b, upredValue)}
		if b == 0 {
			sm.Exception, sm.ErrorPC, sm.ErrorPCValid = excWarpIllegalInstruction, fx.KernelPC, true
			w.ErrorPC, w.ErrorPCValid = fx.KernelPC, true
		}
		w.Lanes = []*Lane{{PC: fx.KernelPC, CallDepth: 1, Regs: seq(255, b, regValue), Preds: seq(8, b, predValue)}}
		sm.CTAs = []*CTA{{GridID: 1, Block: [3]uint32{b, 0, 0}, Warps: []*Warp{w}}}
		dev.SMs = append(dev.SMs, sm)
		stop := ""
		if b == 0 {
			stop = stopWII
		}
		want.Threads = append(want.Threads, WantThread{laneName(b), stop})
	}
	// The compared set: R0..R254, UR0..UR254, P0..P6, UP0..UP6 (P7 and UP7,
	// the constant-true PT and UPT, are left out: cuda-gdb does not name them).
	for i := uint32(0); i < 255; i++ {
		want.Registers[fmt.Sprintf("R%d", i)] = uint64(regValue(0, i))
		want.Registers[fmt.Sprintf("UR%d", i)] = uint64(uregValue(0, i))
	}
	for i := uint32(0); i < 7; i++ {
		want.Registers[fmt.Sprintf("P%d", i)] = uint64(predValue(0, i))
		want.Registers[fmt.Sprintf("UP%d", i)] = uint64(upredValue(0, i))
	}
	c := &Core{Metadata: true, Devices: []*Device{dev}, Images: []Image{{Data: fx.Reloc90, Relocated: true, Module: mod}}}
	return []Scenario{{comparison, "test_compare_artificial_core", c, want}}
}

// seq is n leaf words f(t, 0..n-1).
func seq(n int, t uint32, f func(t, i uint32) uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = f(t, uint32(i))
	}
	return out
}
