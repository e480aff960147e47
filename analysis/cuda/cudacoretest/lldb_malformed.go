package cudacoretest

// TestNVGPUArtificialMalformed: rejection and recovery paths of the table
// tree. Every core is LLDB's one-thread scaffold ("_minimal") or a device
// with SMs, with a malformed section bolted on.

const malformed = "TestNVGPUArtificialMalformed"

// scaffold is the test's "_minimal": a device advertising 32 registers a
// lane; SM 0 recording WARP_ILLEGAL_INSTRUCTION at errorPC 0x100000; one
// CTA at blockIdx (0,0,0) of grid 1 (which has no grid row); one warp
// with lane 0 valid and active and errorPC 0x100000; lane 0 at pc 0x100000
// with a register leaf of 32 zeros. No cubin.
func scaffold() *Core {
	lane := &Lane{ID: 0, PC: 0x100000, CallDepth: 1, Regs: make([]uint32, 32)}
	warp := &Warp{Valid: 1, Active: 1, ErrorPC: 0x100000, ErrorPCValid: true, Lanes: []*Lane{lane}}
	sm := &SM{Exception: excWarpIllegalInstruction, ErrorPC: 0x100000, ErrorPCValid: true,
		CTAs: []*CTA{{GridID: 1, Warps: []*Warp{warp}}}}
	return &Core{Metadata: true, Devices: []*Device{{NumSMs: 1, WarpsPerSM: 1, LanesPerWarp: 32, RegsPerLane: 32,
		PredicatesPerLane: 8, InstructionSize: 16, SMs: []*SM{sm}}}}
}

// scaffoldWant is what LLDB reads from the scaffold: its one thread, which
// borrows the SM's exception (lane 0 is active in a warp whose errorPC is
// valid), blockDim and gridDim zero (no grid row), no frame symbolized
// (no cubin).
func scaffoldWant() Want {
	return Want{
		Threads:  []WantThread{{"blockIdx(x=0 y=0 z=0) threadIdx(x=0 y=0 z=0)", stopWII}},
		Selected: "blockIdx(x=0 y=0 z=0) threadIdx(x=0 y=0 z=0)", Exception: "Warp Illegal Instruction",
		ErrorPC: 0x100000, HasErrorPC: true, FramePC: 0x100000,
		Block: &[3]uint32{}, Thread: &[3]uint32{}, BlockDim: &[3]uint32{}, GridDim: &[3]uint32{}, Lane: ptr(uint32(0)),
		Registers: map[string]uint64{"PC": 0x100000, "errorPC": 0x100000, "R0": 0, "R31": 0, "RZ": 0},
	}
}

func malformedScenarios() []Scenario {
	refused := func(method string, c *Core, why ...string) Scenario {
		return Scenario{malformed, method, c, Want{Refused: why}}
	}
	withRaw := func(c *Core, raw ...RawSection) *Core {
		c.Raw = raw
		return c
	}
	// test_wrong_parent_kind: a device with an SM (and nothing below it)
	// and a CTA table whose parent is the device table.
	bare := &Core{Metadata: true, Devices: []*Device{{NumSMs: 1, SMs: []*SM{{}}}}}
	truncated := scaffoldWant()
	truncated.NoMemory = []uint64{0x100000000}
	return []Scenario{
		{malformed, "test_minimal_scaffold_loads", scaffold(), scaffoldWant()},
		// A device table with no SMs underneath produces no hierarchy.
		refused("test_missing_device_hierarchy", &Core{Metadata: true, Devices: []*Device{{}}},
			"no NVGPU device hierarchy found"),
		// An SM table with sh_link 0 has no resolvable parent table.
		refused("test_invalid_parent_link", withRaw(scaffold(), RawSection{Name: ".cudbg.smtbl.bad", Type: ShtSMTable,
			Data: make([]byte, Current.SM), Entsize: uint64(Current.SM)}), "invalid sh_link"),
		refused("test_wrong_parent_kind", withRaw(bare, RawSection{Name: ".cudbg.ctatbl.bad", Type: ShtCTATable,
			Link: ".cudbg.devtbl", Data: make([]byte, Current.CTA), Entsize: uint64(Current.CTA)}),
			"resolves to a parent of", "expected type"),
		// A leaf whose sh_info exceeds its parent table's row count.
		refused("test_out_of_range_row_index", withRaw(scaffold(), RawSection{Name: ".cudbg.regs.bad", Type: ShtDevRegs,
			Link: ".cudbg.lntbl.dev0.sm0.cta0.wp0", Info: 99, Data: make([]byte, 128)}), "out of range for table"),
		// A container table with sh_entsize 0 has no addressable rows.
		refused("test_zero_entsize_table", withRaw(scaffold(), RawSection{Name: ".cudbg.smtbl.bad", Type: ShtSMTable,
			Link: ".cudbg.devtbl", Data: make([]byte, Current.SM)}), "zero sh_entsize"),
		// A leaf claiming to run past the end of the file is dropped; the
		// core loads with its one thread, the region reads as absent.
		{malformed, "test_truncated_leaf_is_skipped", withRaw(scaffold(), RawSection{Name: ".cudbg.global.trunc",
			Type: ShtGlobalMem, Data: []byte{0xef, 0xbe, 0xad, 0xde}, Addr: 0x100000000, Size: 0x100000}), truncated},
		sparseLanes(),
	}
}

// sparseLanes is test_sparse_lanes_materialize_by_leaf: lanes 0..7 valid
// and active, but only lane 7 (threadIdx (7,0,0), blockIdx (1,0,0)) has a
// row and a register leaf; rows 0..6 of the lane table are empty. Only
// lane 7 is a thread.
func sparseLanes() Scenario {
	c := scaffold()
	sm := c.Devices[0].SMs[0]
	sm.CTAs[0].Block = [3]uint32{1, 0, 0}
	w := sm.CTAs[0].Warps[0]
	w.Valid, w.Active = 0xff, 0xff
	w.Lanes = []*Lane{{ID: 7, Thread: [3]uint32{7, 0, 0}, PC: 0x100000, CallDepth: 1, Regs: make([]uint32, 32)}}
	want := scaffoldWant()
	name := "blockIdx(x=1 y=0 z=0) threadIdx(x=7 y=0 z=0)"
	want.Threads = []WantThread{{name, stopWII}}
	want.Selected, want.Block, want.Thread, want.Lane = name, &[3]uint32{1, 0, 0}, &[3]uint32{7, 0, 0}, ptr(uint32(7))
	return Scenario{malformed, "test_sparse_lanes_materialize_by_leaf", c, want}
}
