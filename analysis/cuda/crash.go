package cuda

import (
	"fmt"
	"io"

	"github.com/faultline-dev/faultline/analysis/model"
)

// ReadCrash reads an NVIDIA GPU core dump (.nvcudmp, decompressed) from r
// into the crash model; path names it there and in errors: the dump.format is "cuda-core" and the gpu section
// holds the device, the kernel, the launch and faulting coordinates, the
// exception, errorPC and its full inline chain from the relocated cubin
// the dump saved. The dump holds no host stack; analysis.OpenWithHostCore adds it. GPU
// dumps carry their cubins: there is nothing to locate on disk.
func ReadCrash(path string, r io.Reader) (*model.Crash, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxDumpBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxDumpBytes {
		return nil, fmt.Errorf("%s is larger than %d GiB", path, maxDumpBytes>>30)
	}
	d, err := ParseCoreDump(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d.Path = path
	c := &model.Crash{Schema: model.Schema, Dump: model.Dump{Path: path, Format: "cuda-core"}, Threads: []model.Thread{}, Modules: []model.Module{},
		Problems: []model.Problem{}}
	for _, p := range d.Problems {
		c.Problems = append(c.Problems, model.Problem{Message: "GPU core: " + p})
	}
	for _, img := range d.Images {
		if img.Cubin == nil || !img.Relocated {
			continue
		}
		for _, p := range img.Cubin.Problems {
			c.Problems = append(c.Problems, model.Problem{Module: img.Section, Message: p})
		}
		c.Modules = append(c.Modules, cubinModule(img))
	}
	c.GPU = gpuSection(d, c)
	if c.GPU != nil && c.Dump.Arch == "" {
		c.Dump.Arch = c.GPU.Arch
	}
	return c, nil
}

// cubinModule describes a relocated image as a module: its code range on
// the device and whether it has line information.
func cubinModule(img Image) model.Module {
	m := model.Module{Path: img.Section, Symbols: "symtab"}
	if img.Cubin.HasLineInfo() {
		m.Symbols = "lineinfo"
	}
	lo, hi := ^uint64(0), uint64(0)
	for _, f := range img.Cubin.Functions() {
		lo = min(lo, f.Addr)
		hi = max(hi, f.Addr+f.Size)
	}
	if hi > 0 {
		m.Lo, m.Hi = lo, hi
		m.Start, m.End = fmt.Sprintf("%#x", lo), fmt.Sprintf("%#x", hi)
	}
	return m
}

// gpuSection fills the model's gpu section from the dump's fault: the
// first lane with an exception, else (a dump requested through
// CUDA_COREDUMP_PIPE while a kernel hangs) the first resident lane.
func gpuSection(d *CoreDump, c *model.Crash) *model.GPU {
	g := &model.GPU{}
	if len(d.Devices) > 0 {
		g.Device = d.Devices[0].Name
		g.Arch = d.Devices[0].SMType
	}
	f, hang := d.Fault(), false
	if f == nil {
		f, hang = firstResidentLane(d), true
	}
	if f == nil {
		c.Problems = append(c.Problems, model.Problem{Message: "GPU core: no resident warp: the dump names no faulting or running kernel"})
		return g
	}
	describeFault(g, d, f, hang)
	loc, img, err := d.Lookup(f.PC)
	if err != nil {
		c.Problems = append(c.Problems, model.Problem{Message: "GPU core: " + err.Error()})
		if f.Grid != nil {
			if kl, _, err := d.Lookup(f.Grid.FunctionEntry); err == nil {
				g.Kernel, g.KernelSymbol = kl.Function, kl.Symbol
			}
		}
		return g
	}
	g.Kernel, g.KernelSymbol = loc.Function, loc.Symbol
	if f.Grid != nil {
		// A fault inside a noinline device function: name the kernel the
		// grid launched, keep the function in the frames.
		if kl, _, err := d.Lookup(f.Grid.FunctionEntry); err == nil && kl.Symbol != "" {
			g.Kernel, g.KernelSymbol = kl.Function, kl.Symbol
		}
	}
	g.Offset = fmt.Sprintf("%s+%#x", loc.Section, loc.Offset)
	g.Frames = gpuFrames(c, g.ErrorPC, f.PC, loc, img)
	return g
}

// firstResidentLane is the first lane of the first warp with lanes, as a
// fault without exception; nil when no warp is resident.
func firstResidentLane(d *CoreDump) *Fault {
	for wi := range d.Warps {
		if w := &d.Warps[wi]; len(w.Lanes) > 0 {
			return &Fault{Warp: w, Lane: &w.Lanes[0], PC: w.Lanes[0].PC, Grid: d.Grid(w.Device, w.GridID)}
		}
	}
	return nil
}

// describeFault fills in the device, the exception (or the hang note) and
// where the fault is: SM, warp, block, lane, thread and grid.
func describeFault(g *model.GPU, d *CoreDump, f *Fault, hang bool) {
	if f.Warp.Device < len(d.Devices) {
		dev := d.Devices[f.Warp.Device]
		g.Device, g.Arch = dev.Name, dev.SMType
		if g.Arch == "" && dev.SMMajor != 0 {
			g.Arch = fmt.Sprintf("sm_%d%d", dev.SMMajor, dev.SMMinor)
		}
	}
	if hang {
		g.Exception = "no exception (dump requested while the kernel ran: a hang?)"
		g.Notes = append(g.Notes, "No lane has an exception: the dump was requested (CUDA_COREDUMP_PIPE or a "+
			"debugger) while kernels ran. The lanes' pcs show where each warp was; a kernel that stays at the same "+
			"pc across two dumps is spinning.")
	} else {
		g.Exception = f.Exception.String()
	}
	g.ErrorPC = fmt.Sprintf("%#x", f.PC)
	sm, warp := int(f.Warp.SM), int(f.Warp.WarpID)
	g.SM, g.Warp = &sm, &warp
	g.Block = &model.Dim3{X: f.Warp.Block[0], Y: f.Warp.Block[1], Z: f.Warp.Block[2]}
	if f.Lane != nil {
		lane := int(f.Lane.Lane)
		g.Lane = &lane
		g.Thread = &model.Dim3{X: f.Lane.Thread[0], Y: f.Lane.Thread[1], Z: f.Lane.Thread[2]}
	}
	if f.Grid != nil {
		g.GridDim = &model.Dim3{X: f.Grid.GridDim[0], Y: f.Grid.GridDim[1], Z: f.Grid.GridDim[2]}
		g.BlockDim = &model.Dim3{X: f.Grid.BlockDim[0], Y: f.Grid.BlockDim[1], Z: f.Grid.BlockDim[2]}
		g.HostThread = int(f.Grid.HostTID)
	}
}

// gpuFrames are the frames at the faulting pc: every inline level of its
// line information, or the function alone (with a problem) without it.
func gpuFrames(c *model.Crash, errorPC string, pc uint64, loc Location, img *Image) []model.Frame {
	if len(loc.Frames) == 0 {
		c.Problems = append(c.Problems, model.Problem{Module: img.Section,
			Message: "the faulting kernel has no line information: rebuild with -lineinfo (NVCC_PREPEND_FLAGS='-lineinfo')"})
		return []model.Frame{{PC: errorPC, Addr: pc, Function: loc.Function, Module: img.Section,
			Offset: loc.SymbolOffset, Trust: model.TrustContext}}
	}
	var frames []model.Frame
	for i, fr := range loc.Frames {
		// Inline levels share the physical frame's trust: the pc comes
		// from the dump's warp state.
		frames = append(frames, model.Frame{Index: i, PC: errorPC, Addr: pc, Module: img.Section,
			Function: fr.Function, File: fr.File, Line: fr.Line, Column: fr.Column,
			Inlined: i < len(loc.Frames)-1, Trust: model.TrustContext, Offset: loc.SymbolOffset})
	}
	return frames
}
