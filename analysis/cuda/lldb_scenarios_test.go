package cuda_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/cuda"
	"github.com/faultline-dev/faultline/analysis/cuda/cudacoretest"
)

// The scenarios of LLDB's nvgpu-core tests for artificial cores
// (lldb/test/API/gpu/nvidia/corefiles/TestNVGPUArtificialMalformed.py in
// the LLDB tree with GPU support), built with cudacoretest instead of
// LLDB's yaml2obj builder, and what faultline must read from each: the
// same verdict LLDB reaches (refused, or read with the same state).

func lldbScaffold(t *testing.T) cudacoretest.Spec {
	t.Helper()
	cubin, err := os.ReadFile(filepath.Join(testdataDir, "cubins", "kernels.sm_80.cubin"))
	if err != nil {
		t.Fatal(err)
	}
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

// TestLLDBScaffoldLoads is LLDB's positive control: the scaffold the
// malformed cases build on reads, with its faulting lane.
func TestLLDBScaffoldLoads(t *testing.T) {
	d, err := cuda.ParseCoreDump(buildCore(t, lldbScaffold(t)))
	if err != nil {
		t.Fatal(err)
	}
	if f := d.Fault(); f == nil || f.Lane == nil || f.Lane.Thread != [3]uint32{101, 0, 0} || len(d.Problems) != 0 {
		t.Fatalf("fault %+v problems %v", f, d.Problems)
	}
}

// TestLLDBMalformedTablesAreRefused: the structural defects LLDB refuses
// a core for are refused here too, each with the condition named.
func TestLLDBMalformedTablesAreRefused(t *testing.T) {
	cases := map[string]struct {
		extra []cudacoretest.RawSection
		want  string
	}{
		"invalid parent link": {[]cudacoretest.RawSection{{Name: ".cudbg.smtbl.bad", Type: cudacoretest.ShtSMTable,
			Data: make([]byte, cudacoretest.SMRow), Entsize: cudacoretest.SMRow}}, "invalid sh_link 0"},
		"wrong parent kind": {[]cudacoretest.RawSection{{Name: ".cudbg.ctatbl.bad", Type: cudacoretest.ShtCTATable,
			Link: ".cudbg.devtbl", Data: make([]byte, cudacoretest.CTARow), Entsize: cudacoretest.CTARow}},
			"resolves to a parent of device table, expected type SM table"},
		"out-of-range row": {[]cudacoretest.RawSection{{Name: ".cudbg.regs.bad", Type: cudacoretest.ShtDevRegs,
			Link: ".cudbg.lntbl.dev0.sm0.cta0.wp0", Info: 99, Data: make([]byte, 128)}}, "sh_info row 99 out of range for table"},
		"zero entsize": {[]cudacoretest.RawSection{{Name: ".cudbg.smtbl.bad", Type: cudacoretest.ShtSMTable,
			Link: ".cudbg.devtbl", Data: make([]byte, cudacoretest.SMRow)}}, "zero sh_entsize"},
	}
	for name, tc := range cases {
		s := lldbScaffold(t)
		s.Extra = tc.extra
		_, err := cuda.ParseCoreDump(buildCore(t, s))
		var he *cuda.HierarchyError
		if !errors.As(err, &he) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a HierarchyError saying %q", name, err, tc.want)
		}
	}
}

// TestLLDBMissingHierarchy: a device table with nothing below it is no core.
func TestLLDBMissingHierarchy(t *testing.T) {
	core := buildCore(t, lldbScaffold(t))
	d, err := cuda.ParseCoreDump(core)
	if err != nil || len(d.Devices) != 1 {
		t.Fatal(err)
	}
	// Turn every table below the device table into PROGBITS.
	stripped := retypeSections(t, core, func(typ uint32) bool {
		return typ != cudacoretest.ShtDevTable && typ >= cudacoretest.ShtCtxTable && typ <= cudacoretest.ShtModTable
	})
	_, err = cuda.ParseCoreDump(stripped)
	if err == nil || !strings.Contains(err.Error(), "no NVGPU device hierarchy found") {
		t.Errorf("device table alone: %v", err)
	}
}

// TestLLDBTruncatedLeafIsSkipped: a memory section claiming to run past
// the end of the file is dropped with a problem; the rest reads.
func TestLLDBTruncatedLeafIsSkipped(t *testing.T) {
	s := lldbScaffold(t)
	s.Extra = []cudacoretest.RawSection{{Name: ".cudbg.global.trunc", Type: cudacoretest.ShtGlobalMem,
		Data: []byte{0xef, 0xbe, 0xad, 0xde}, Addr: 0x100000000, Size: 0x100000}}
	d, err := cuda.ParseCoreDump(buildCore(t, s))
	if err != nil {
		t.Fatal(err)
	}
	if f := d.Fault(); f == nil || f.Lane == nil || f.Lane.Lane != 5 {
		t.Fatalf("fault %+v", f)
	}
}

// TestLLDBMissingGridRowKeepsLaneState: a CTA whose grid has no row loses
// only the launch dimensions; pc, error pc, block and thread survive.
func TestLLDBMissingGridRowKeepsLaneState(t *testing.T) {
	s := lldbScaffold(t)
	s.NoGrid = true
	d, err := cuda.ParseCoreDump(buildCore(t, s))
	if err != nil {
		t.Fatal(err)
	}
	f := d.Fault()
	if f == nil || f.Grid != nil || f.PC != s.ErrorPC || f.Lane.PC != s.ErrorPC || f.Warp.Block != s.Block ||
		f.Lane.Thread != s.Thread {
		t.Fatalf("fault %+v (grid %+v)", f, f.Grid)
	}
}

// retypeSections rewrites sh_type of the sections keep selects to
// SHT_PROGBITS in a copy of an ELF64 core.
func retypeSections(t *testing.T, core []byte, sel func(uint32) bool) []byte {
	t.Helper()
	out := append([]byte{}, core...)
	shoff := le64(out[40:])
	n := int(uint16(out[60]) | uint16(out[61])<<8)
	for i := 0; i < n; i++ {
		h := out[shoff+uint64(i)*64:]
		typ := uint32(h[4]) | uint32(h[5])<<8 | uint32(h[6])<<16 | uint32(h[7])<<24
		if sel(typ) {
			h[4], h[5], h[6], h[7] = 1, 0, 0, 0
		}
	}
	return out
}

func le64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
