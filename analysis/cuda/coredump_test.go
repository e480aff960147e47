package cuda_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis/cuda"
	"github.com/faultline-dev/faultline/analysis/cuda/cudacoretest"
)

// kernelAddr returns the device address of function name in the cubin as
// RelocateCubin places it at base.
func kernelAddr(t testing.TB, cubin []byte, base uint64, name string) uint64 {
	t.Helper()
	rel, err := cudacoretest.RelocateCubin(cubin, base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cuda.ParseCubin(rel)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Relocated() {
		t.Fatal("relocated cubin has no section addresses")
	}
	for _, f := range c.Functions() {
		if f.Name == name {
			return f.Addr
		}
	}
	t.Fatalf("no function %s", name)
	return 0
}

// illegalAddressSpec is a Warp Illegal Address in crash_kernel at the
// load of fl::load_global<int> (offset 0xc0 of .text.crash_kernel in
// kernels.sm_80.cubin; nvdisasm: @!P0 LDG.E R4, [R6.64], the index load).
func illegalAddressSpec(t testing.TB, cubin []byte, rows cudacoretest.RowSizes) (cudacoretest.Spec, uint64) {
	const base = 0x7fff_d000_0000
	entry := kernelAddr(t, cubin, base, "crash_kernel")
	return cudacoretest.Spec{
		Rows: rows, DeviceName: "NVIDIA A100-SXM4-80GB", DeviceType: "GA100", SMType: "sm_80",
		SMMajor: 8, SMMinor: 0, NumSMs: 108,
		ContextID: 0x55d0c0, HostTID: 4242, GridID: 7,
		GridDim: [3]uint32{4, 1, 1}, BlockDim: [3]uint32{128, 1, 1},
		SM: 17, Block: [3]uint32{2, 0, 0}, WarpID: 3, Lane: 5, Thread: [3]uint32{101, 0, 0},
		Exception: 14, ErrorPC: entry + 0xc0, PC: entry + 0x80,
		Cubin: cubin, Base: base, KernelEntry: entry,
	}, entry
}

// rowLayouts are the row sizes of several driver generations: the 2015
// layout, rows grown by newer drivers (the 575+ device row is longer), and
// rows cut short where a field did not exist yet.
var rowLayouts = map[string]cudacoretest.RowSizes{
	"2015":    {},
	"grown":   {Device: 112, Grid: 136, Warp: 48, Lane: 64, CTA: 32, Context: 56, SM: 16, Module: 16},
	"older":   {Grid: 96, Lane: 40},
	"entsize": {Device: 80},
}

func TestSyntheticCoreDumps(t *testing.T) {
	cubin, err := os.ReadFile(filepath.Join(testdataDir, "cubins", "kernels.sm_80.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	for name, rows := range rowLayouts {
		t.Run(name, func(t *testing.T) {
			spec, entry := illegalAddressSpec(t, cubin, rows)
			b, err := cudacoretest.Build(spec)
			if err != nil {
				t.Fatal(err)
			}
			d, err := cuda.ParseCoreDump(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Problems) > 0 {
				t.Errorf("problems: %q", d.Problems)
			}
			if len(d.Devices) != 1 || d.Devices[0].Name != spec.DeviceName || d.Devices[0].SMType != "sm_80" || d.Devices[0].NumSMs != 108 {
				t.Errorf("devices: %+v", d.Devices)
			}
			if len(d.Warps) != 2 || len(d.Warps[0].Lanes) != 32 {
				t.Fatalf("warps: %d, lanes %d", len(d.Warps), len(d.Warps[0].Lanes))
			}
			f := selectedThread(t, d)
			pc, _ := f.FaultPC()
			if f.Exception.String() != "Warp Illegal Address" || f.Source != cuda.FromLane || pc != entry+0xc0 ||
				f.Lane.Thread != [3]uint32{101, 0, 0} || f.Warp.Block != [3]uint32{2, 0, 0} || f.Warp.SM != 17 || f.Warp.WarpID != 3 {
				t.Errorf("fault: %v pc %#x thread %v block %v sm %d warp %d", f.Exception, pc, f.Lane.Thread, f.Warp.Block, f.Warp.SM, f.Warp.WarpID)
			}
			// 64 lanes with register leaves (two warps of 32), one with the
			// exception; the SM row of the 2015 layout records none.
			if ts := d.Threads(); len(ts) != 64 {
				t.Errorf("%d threads, want 64", len(ts))
			}
			// A row cut before attrHostTid reads it as zero.
			wantTID := uint32(4242)
			if rows.Grid != 0 && rows.Grid < cudacoretest.GridRow {
				wantTID = 0
			}
			gr := d.Grid(f.Warp.Device, f.Warp.GridID)
			if gr == nil || gr.GridDim != [3]uint32{4, 1, 1} || gr.BlockDim != [3]uint32{128, 1, 1} || gr.HostTID != wantTID {
				t.Fatalf("grid: %+v", gr)
			}
			loc, img, err := d.Lookup(pc)
			if err != nil {
				t.Fatal(err)
			}
			if !img.Relocated || loc.Function != "crash_kernel" || loc.Offset != 0xc0 {
				t.Errorf("lookup: %+v", loc)
			}
			// The chain must be the one the cubin gives for crash_kernel+0xc0,
			// which TestChainsMatchNvdisasm checks against nvdisasm.
			c, err := cuda.ParseCubin(cubin)
			if err != nil {
				t.Fatal(err)
			}
			want, err := c.Resolve("crash_kernel+0xc0")
			if err != nil {
				t.Fatal(err)
			}
			if got, w := fmt.Sprint(loc.Frames), fmt.Sprint(want.Frames); got != w || len(loc.Frames) < 4 {
				t.Errorf("relocated chain\n got  %s\n want %s", got, w)
			}
		})
	}
}

// TestHangDump is a dump written through CUDA_COREDUMP_PIPE while
// spin_kernel spins: no exception, every lane at the loop.
func TestHangDump(t *testing.T) {
	cubin, err := os.ReadFile(filepath.Join(testdataDir, "cubins", "kernels.sm_80.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	const base = 0x7f00_0000_0000
	entry := kernelAddr(t, cubin, base, "spin_kernel")
	b, err := cudacoretest.Build(cudacoretest.Spec{DeviceName: "NVIDIA A100", SMType: "sm_80", SMMajor: 8,
		GridID: 1, GridDim: [3]uint32{1, 1, 1}, BlockDim: [3]uint32{64, 1, 1}, PC: entry + 0x50,
		Cubin: cubin, Base: base, KernelEntry: entry, SkipNonRelocated: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := cuda.ParseCoreDump(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range d.Threads() {
		if th.HasStop() {
			t.Errorf("hang dump: thread %s stopped: %v", th.Name(), th.Exception)
		}
	}
	loc, _, err := d.Lookup(d.Warps[0].Lanes[0].PC)
	if err != nil {
		t.Fatal(err)
	}
	// nvdisasm: spin_kernel+0x50 is "kernels.cu:35 inlined at kernels.cu:40".
	if got := levels(loc.Frames); got != "kernels.cu:35 <- kernels.cu:40" || loc.Frames[0].Function != "keep_waiting" {
		t.Errorf("spin_kernel+0x50: %s (%s)", got, loc.Frames[0].Function)
	}
}

// selectedThread is the thread a debugger stops on in d.
func selectedThread(t *testing.T, d *cuda.CoreDump) *cuda.Thread {
	t.Helper()
	ts := d.Threads()
	i := cuda.SelectThread(ts)
	if i < 0 {
		t.Fatal("no GPU thread")
	}
	return &ts[i]
}

func TestParseCoreDumpRejects(t *testing.T) {
	cubin, err := os.ReadFile(filepath.Join(testdataDir, "cubins", "kernels.sm_80.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cuda.ParseCoreDump(cubin); err == nil {
		t.Error("a cubin parsed as a core dump")
	}
	if _, err := cuda.ParseCoreDump([]byte("\x7fELF")); err == nil {
		t.Error("a truncated header parsed")
	}
}
