package cudacoretest

import "fmt"

// TestNVGPUArtificialSMException: SM-level exceptions with no surviving
// kernel context. A kernel that faulted and ran to completion before the
// dump was written leaves its SM row's exception and errorPC while every
// warp is gone; the reader stands in for it with a lane-less thread
// "device D SM S (no kernel context)" whose one frame is the SM's errorPC.

const smException = "TestNVGPUArtificialSMException"

const (
	globalAddr   = 0x100000000
	contextID    = 0x101
	moduleHandle = 0x2000
)

var deadbeef = []byte{0xef, 0xbe, 0xad, 0xde}

// smCore is the test's "_builder": a device carrying the relocated cubin
// at the root and one global region, no SMs yet; with a context and grid 1
// (<<<(8,1,1), (32,1,1)>>>) when withGrid, for cores with lane threads.
func smCore(fx Fixture, withGrid bool) (*Core, *Device) {
	dev := &Device{NumSMs: 4, WarpsPerSM: 1, LanesPerWarp: 32, RegsPerLane: 32, PredicatesPerLane: 8, InstructionSize: 16}
	if withGrid {
		dev.Contexts = []*Context{{ID: contextID}}
		dev.Grids = []*Grid{{ID: 1, ContextID: contextID, GridDim: [3]uint32{8, 1, 1}, BlockDim: [3]uint32{32, 1, 1}, Status: 3}}
	}
	c := &Core{Metadata: true, Devices: []*Device{dev}, Global: []Memory{{globalAddr, deadbeef}},
		Images: []Image{{Data: fx.Relocated, Relocated: true}}}
	return c, dev
}

// faulted is an SM recording exc at errorPC.
func faulted(id uint32, exc uint32, errorPC uint64) *SM {
	return &SM{ID: id, Exception: exc, ErrorPC: errorPC, ErrorPCValid: true}
}

// withLane gives sm a single-lane CTA at block (the test's "_add_lane"):
// lane 0 at the lane pc with a register leaf, its own exception exc, and
// the warp's errorPC when warpErrorPC is set.
func withLane(sm *SM, fx Fixture, block [3]uint32, exc uint32, warpErrorPC bool) *SM {
	w := &Warp{Valid: 1, Active: 1, Lanes: []*Lane{{PC: fx.LanePC, Exception: exc, CallDepth: 1, Regs: make([]uint32, 32)}}}
	if warpErrorPC {
		w.ErrorPC, w.ErrorPCValid = fx.ErrorPC, true
	}
	sm.CTAs = append(sm.CTAs, &CTA{GridID: 1, Block: block, Warps: []*Warp{w}})
	return sm
}

// standIn is what LLDB reads of a lone stand-in for SM id at the errorPC.
func standIn(fx Fixture, id uint32) Want {
	name := standInName(id)
	return Want{Threads: []WantThread{{name, stopDIA}}, Selected: name, Exception: "Device Illegal Address",
		ErrorPC: fx.ErrorPC, HasErrorPC: true, FramePC: fx.ErrorPC, Function: fx.ErrorFunction, SM: id,
		Registers: map[string]uint64{"PC": fx.ErrorPC, "errorPC": fx.ErrorPC}, OnlyRegisters: true}
}

func standInName(id uint32) string {
	return fmt.Sprintf("device 0 SM %d (no kernel context)", id)
}

func laneName(bx uint32) string {
	return fmt.Sprintf("blockIdx(x=%d y=0 z=0) threadIdx(x=0 y=0 z=0)", bx)
}

func smExceptionScenarios(fx Fixture) []Scenario {
	sc := func(method string, c *Core, w Want) Scenario { return Scenario{smException, method, c, w} }
	// test_stands_in_for_exception_after_warps_exit: only SM 0's row and a
	// root cubin; one thread, one frame at the errorPC, symbolized.
	exited, dev := smCore(fx, false)
	dev.SMs = []*SM{faulted(0, excDeviceIllegalAddress, fx.ErrorPC)}
	// test_only_the_fault_pc_is_readable: the same core; PC and errorPC
	// read the errorPC, no other register reads.
	pcOnly, dev2 := smCore(fx, false)
	dev2.SMs = []*SM{faulted(0, excDeviceIllegalAddress, fx.ErrorPC)}
	// test_stand_in_has_no_thread_scoped_memory: global memory reads;
	// nothing thread-scoped does (no lane, CTA or grid).
	memory, dev3 := smCore(fx, false)
	dev3.SMs = []*SM{faulted(0, excDeviceIllegalAddress, fx.ErrorPC)}
	withMemory := standIn(fx, 0)
	withMemory.Memory = map[uint64][]byte{globalAddr: deadbeef}
	// test_exception_without_error_pc: SM 4 (row 0) records
	// WARP_OUT_OF_RANGE_ADDRESS without an errorPC: the exception and the
	// SM still reach the user; one frame, at pc 0.
	noPC, dev4 := smCore(fx, false)
	dev4.SMs = []*SM{{ID: 4, Exception: excWarpOutOfRangeAddress}}
	// test_idle_sm_gets_no_thread: only the faulted SM 1 of three stands in.
	idle, dev5 := smCore(fx, false)
	dev5.SMs = []*SM{{ID: 0}, faulted(1, excDeviceIllegalAddress, fx.ErrorPC), {ID: 2}}
	idleWant := standIn(fx, 1)
	return []Scenario{
		sc("test_stands_in_for_exception_after_warps_exit", exited, standIn(fx, 0)),
		sc("test_only_the_fault_pc_is_readable", pcOnly, standIn(fx, 0)),
		realShape(fx),
		sc("test_exception_without_error_pc", noPC, Want{
			Threads: []WantThread{{standInName(4), stopWOR}}, Selected: standInName(4),
			Exception: "Warp Out-of-range Address", SM: 4, Registers: map[string]uint64{"PC": 0, "errorPC": 0}, OnlyRegisters: true}),
		sc("test_idle_sm_gets_no_thread", idle, idleWant),
		survivingLane(fx),
		bothFaults(fx, "test_lane_exception_outranks_sm_exception"),
		bothFaults(fx, "test_stand_in_appears_in_aggregated_thread_list"),
		collapsed(fx),
		sc("test_stand_in_has_no_thread_scoped_memory", memory, withMemory),
	}
}

// realShape is test_matches_a_real_exited_kernel_core: the shape a real
// dump of an exited kernel has (cuda-gdb's bug4247218) — the context
// outlives the kernel, the grid table and both SMs' CTA tables are there
// without rows, and the cubins hang below a module's row, the
// unrelocated image beside the relocated one. SM 1 ran the same kernel
// without faulting. Still one stand-in, symbolized through the relocated
// image.
func realShape(fx Fixture) Scenario {
	mod := &Module{Handle: moduleHandle}
	dev := &Device{NumSMs: 2, WarpsPerSM: 1, LanesPerWarp: 32, RegsPerLane: 32, PredicatesPerLane: 8, InstructionSize: 16,
		Contexts: []*Context{{ID: contextID, Modules: []*Module{mod}}}, EmptyGridTable: true,
		SMs: []*SM{faulted(0, excDeviceIllegalAddress, fx.ErrorPC), {ID: 1}}}
	for _, sm := range dev.SMs {
		sm.EmptyCTATable = true
	}
	c := &Core{Metadata: true, Devices: []*Device{dev}, Global: []Memory{{globalAddr, deadbeef}},
		Images: []Image{{Data: fx.Relocated, Relocated: true, Module: mod}, {Data: fx.Cubin, Module: mod}}}
	w := standIn(fx, 0)
	w.Memory = map[uint64][]byte{globalAddr: deadbeef}
	return Scenario{smException, "test_matches_a_real_exited_kernel_core", c, w}
}

// survivingLane is test_surviving_lane_suppresses_stand_in: SM 0 records
// WARP_ILLEGAL_INSTRUCTION and keeps a lane (block (0,0,0)) whose warp's
// errorPC is valid: the lane borrows the SM's exception, and no stand-in
// double-reports it.
func survivingLane(fx Fixture) Scenario {
	c, dev := smCore(fx, true)
	dev.SMs = []*SM{withLane(faulted(0, excWarpIllegalInstruction, fx.ErrorPC), fx, [3]uint32{}, 0, true)}
	name := laneName(0)
	return Scenario{smException, "test_surviving_lane_suppresses_stand_in", c, Want{
		Threads: []WantThread{{name, stopWII}}, Selected: name, Exception: "Warp Illegal Instruction",
		ErrorPC: fx.ErrorPC, HasErrorPC: true, FramePC: fx.LanePC,
		Block: &[3]uint32{}, Thread: &[3]uint32{}, BlockDim: &[3]uint32{32, 1, 1}, GridDim: &[3]uint32{8, 1, 1},
		Lane: ptr(uint32(0)), Registers: map[string]uint64{"PC": fx.LanePC, "errorPC": fx.ErrorPC, "R0": 0},
	}}
}

// bothFaults is the core of test_lane_exception_outranks_sm_exception and
// test_stand_in_appears_in_aggregated_thread_list: SM 0 faulted with no
// lane left, SM 1 keeps a lane (block (7,0,0)) with its own
// WARP_ILLEGAL_INSTRUCTION. Both are threads, the stand-in first; the
// lane is selected (cuda-gdb consults SM state only after finding no lane
// exception); the aggregated list keeps them in two rows.
func bothFaults(fx Fixture, method string) Scenario {
	c, dev := smCore(fx, true)
	dev.SMs = []*SM{faulted(0, excDeviceIllegalAddress, fx.ErrorPC),
		withLane(&SM{ID: 1}, fx, [3]uint32{7, 0, 0}, excWarpIllegalInstruction, false)}
	lane := laneName(7)
	return Scenario{smException, method, c, Want{
		Threads:  []WantThread{{standInName(0), stopDIA}, {lane, stopWII}},
		Selected: lane, Exception: "Warp Illegal Instruction", FramePC: fx.LanePC, SM: 1,
		Block: &[3]uint32{7, 0, 0}, Thread: &[3]uint32{}, BlockDim: &[3]uint32{32, 1, 1}, GridDim: &[3]uint32{8, 1, 1},
		Lane: ptr(uint32(0)), Registers: map[string]uint64{"PC": fx.LanePC, "errorPC": 0},
		Rows: []string{"1 thread(s): " + standInName(0) + ", stop reason = " + stopDIA,
			"1 thread(s): " + lane + ", stop reason = " + stopWII},
	}}
}

// collapsed is test_stand_ins_at_one_site_collapse_to_one_row: three SMs
// faulting at the same errorPC are three threads but one row, "no kernel
// context"; each SM keeps its name.
func collapsed(fx Fixture) Scenario {
	c, dev := smCore(fx, false)
	for id := uint32(0); id < 3; id++ {
		dev.SMs = append(dev.SMs, faulted(id, excDeviceIllegalAddress, fx.ErrorPC))
	}
	w := standIn(fx, 0)
	w.Threads = []WantThread{{standInName(0), stopDIA}, {standInName(1), stopDIA}, {standInName(2), stopDIA}}
	w.Rows = []string{"3 thread(s): no kernel context, stop reason = " + stopDIA}
	return Scenario{smException, "test_stand_ins_at_one_site_collapse_to_one_row", c, w}
}
