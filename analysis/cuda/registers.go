package cuda

import "fmt"

// Register is one SASS register of a GPU thread.
type Register struct {
	Name  string
	Value uint64
}

// SASS register file limits: R0..R254 with RZ (R255) always zero, the same
// for UR; P0..P6 with P7 the constant-true PT, the same for UP.
const (
	maxRegs  = 255
	maxPreds = 7
)

// Registers are t's registers as LLDB's nvgpu-core reader and cuda-gdb
// show them: PC and errorPC (0 when the warp's errorPC is not valid), then
// R0.., RZ, P0..P6, P7, UR0.., URZ, UP0..UP6, UP7 from the lane's and the
// warp's register and predicate leaves, each class clamped to the count
// the device row advertises (TestNVGPUCoreFileComparison.
// test_compare_artificial_core: the faulting thread's registers are the
// leaves' values; RZ and URZ read 0). A stand-in has only PC and errorPC:
// no lane recorded anything else, so nothing else is made up
// (TestNVGPUArtificialSMException.test_only_the_fault_pc_is_readable).
func (d *CoreDump) Registers(t *Thread) []Register {
	out := []Register{{"PC", t.PC()}, {"errorPC", t.ErrorPC()}}
	if t.StandIn() || t.SM.Device >= len(d.Devices) {
		return out
	}
	dev := &d.Devices[t.SM.Device]
	out = d.regClass(out, "R", "RZ", t.Lane.regs, dev.RegsPerLane, maxRegs)
	out = d.predClass(out, "P", t.Lane.preds, dev.PredicatesPerLane)
	if dev.UniformRegsPerWarp > 0 {
		out = d.regClass(out, "UR", "URZ", t.Warp.uregs, dev.UniformRegsPerWarp, maxRegs)
	}
	if dev.UniformPredicatesPerWarp > 0 {
		out = d.predClass(out, "UP", t.Warp.upreds, dev.UniformPredicatesPerWarp)
	}
	return out
}

// regClass appends PREFIX0.. from the leaf (section index + 1; 0: none),
// at most count and limit words, then the zero register.
func (d *CoreDump) regClass(out []Register, prefix, zero string, leaf int, count uint32, limit int) []Register {
	words := d.leafWords(leaf, min(int(count), limit))
	for i, w := range words {
		out = append(out, Register{fmt.Sprintf("%s%d", prefix, i), uint64(w)})
	}
	return append(out, Register{zero, 0})
}

// predClass appends PREFIX0..PREFIX6 from the leaf and PREFIX7, the
// constant-true predicate.
func (d *CoreDump) predClass(out []Register, prefix string, leaf int, count uint32) []Register {
	words := d.leafWords(leaf, min(int(count), maxPreds))
	for i, w := range words {
		v := uint64(0)
		if w != 0 { // "each value is semantically boolean" (cudacoredump.h)
			v = 1
		}
		out = append(out, Register{fmt.Sprintf("%s%d", prefix, i), v})
	}
	return append(out, Register{fmt.Sprintf("%s%d", prefix, maxPreds), 1})
}

// leafWords reads up to n little-endian 32-bit words of a leaf section.
func (d *CoreDump) leafWords(leaf, n int) []uint32 {
	if leaf <= 0 || d.f == nil || n <= 0 {
		return nil
	}
	var sec *elfSection
	for i := range d.f.sections {
		if d.f.sections[i].index == leaf-1 {
			sec = &d.f.sections[i]
		}
	}
	if sec == nil {
		return nil
	}
	b, err := d.f.sectionData(sec)
	if err != nil {
		return nil
	}
	n = min(n, len(b)/4)
	out := make([]uint32, n)
	for i := range out {
		out[i] = le.Uint32(b[4*i:])
	}
	return out
}
