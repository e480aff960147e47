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
	c, _, err := Read(path, r)
	return c, err
}

// Read is ReadCrash that also returns the dump, for views that read its
// memory (ReadGlobal).
func Read(path string, r io.Reader) (*model.Crash, *CoreDump, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxDumpBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxDumpBytes {
		return nil, nil, fmt.Errorf("%s is larger than %d GiB", path, maxDumpBytes>>30)
	}
	d, err := ParseCoreDump(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
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
	return c, d, nil
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

// gpuSection fills the model's gpu section from the dump's threads (as
// LLDB's nvgpu-core reader makes them, see Threads): the selected thread
// is described in full — the exception and the row it came from, SM,
// warp, lane, block, thread, launch, registers, the inline chain at the
// faulting pc — and every thread is listed and aggregated.
func gpuSection(d *CoreDump, c *model.Crash) *model.GPU {
	g := &model.GPU{Vendor: "nvidia", Source: "cuda-core"}
	if len(d.Devices) > 0 {
		g.Device, g.Arch = d.Devices[0].Name, deviceArch(&d.Devices[0])
	}
	threads := d.Threads()
	sel := SelectThread(threads)
	if sel < 0 {
		c.Problems = append(c.Problems, model.Problem{Message: "GPU core: no GPU thread: no resident lane and no SM " +
			"recording an exception; the dump names no faulting or running kernel"})
		return g
	}
	t := &threads[sel]
	sym := newSymbolizer(d)
	describeThread(g, d, t)
	if !t.HasStop() {
		describeNoStop(g, d)
	}
	g.Registers = map[string]string{}
	for _, r := range d.Registers(t) {
		g.Registers[r.Name] = fmt.Sprintf("%#x", r.Value)
	}
	faultFrames(g, c, d, t)
	listThreads(g, threads, sel, sym)
	return g
}

func deviceArch(dev *Device) string {
	if dev.SMType == "" && dev.SMMajor != 0 {
		return fmt.Sprintf("sm_%d%d", dev.SMMajor, dev.SMMinor)
	}
	return dev.SMType
}

// describeThread fills in the device, the exception and where the thread
// is: SM and, for a lane, warp, block, lane, thread and grid.
func describeThread(g *model.GPU, d *CoreDump, t *Thread) {
	if t.SM.Device < len(d.Devices) {
		dev := &d.Devices[t.SM.Device]
		g.Device, g.Arch = dev.Name, deviceArch(dev)
	}
	g.ThreadName, g.StandIn = t.Name(), t.StandIn()
	sm := int(t.SM.ID)
	g.SM = &sm
	switch {
	case t.Exception != 0:
		g.Exception, g.ExceptionSource = t.Exception.String(), string(t.Source)
	case t.Trap:
		g.Exception = "trap"
		g.Notes = append(g.Notes, "The warp is stopped at a trap or breakpoint instruction (isWarpBroken) and no lane has an exception.")
	}
	if pc, ok := t.FaultPC(); ok {
		g.ErrorPC = fmt.Sprintf("%#x", pc)
	}
	g.PC = fmt.Sprintf("%#x", t.PC())
	if t.StandIn() {
		g.Notes = append(g.Notes, standInNote(t))
		return
	}
	warp, lane := int(t.Warp.WarpID), int(t.Lane.Lane)
	g.Warp, g.Lane = &warp, &lane
	g.Block = &model.Dim3{X: t.Warp.Block[0], Y: t.Warp.Block[1], Z: t.Warp.Block[2]}
	g.Thread = &model.Dim3{X: t.Lane.Thread[0], Y: t.Lane.Thread[1], Z: t.Lane.Thread[2]}
	if t.Source == FromWarp {
		g.Notes = append(g.Notes, fmt.Sprintf("The exception is the one SM %d recorded: the lane's own row has none, "+
			"and its warp holds a valid errorPC, so the lane carries the SM's (as LLDB and cuda-gdb attribute it).", t.SM.ID))
	}
	describeLaunch(g, d, t)
}

// standInNote explains a stand-in thread.
func standInNote(t *Thread) string {
	s := fmt.Sprintf("SM %d recorded the exception, but every warp on it had exited before the dump was written: "+
		"no block, thread, warp or lane is left to attribute it to, only the SM's errorPC", t.SM.ID)
	if !t.SM.ErrorPCValid {
		s = fmt.Sprintf("SM %d recorded the exception, but every warp on it had exited before the dump was written, "+
			"and the SM recorded no errorPC: neither the faulting thread nor the faulting instruction is known", t.SM.ID)
	}
	return s + " (the thread \"" + t.Name() + "\", as LLDB's nvgpu-core reader names it)."
}

// describeLaunch fills in the launch of a lane's grid; a CTA whose grid
// has no row keeps its lane state and reads the dimensions as zero, as
// LLDB's blockDim and gridDim registers do.
func describeLaunch(g *model.GPU, d *CoreDump, t *Thread) {
	gr := d.Grid(t.Warp.Device, t.Warp.GridID)
	if gr == nil {
		g.GridDim, g.BlockDim = &model.Dim3{}, &model.Dim3{}
		g.Notes = append(g.Notes, fmt.Sprintf("The grid table has no row for grid %d: the launch dimensions are not in "+
			"the dump (they read as zero).", t.Warp.GridID))
		return
	}
	g.GridDim = &model.Dim3{X: gr.GridDim[0], Y: gr.GridDim[1], Z: gr.GridDim[2]}
	g.BlockDim = &model.Dim3{X: gr.BlockDim[0], Y: gr.BlockDim[1], Z: gr.BlockDim[2]}
	g.HostThread = int(gr.HostTID)
}

// describeNoStop describes a dump where no thread has a stop reason: an
// SM row's exception no lane carries (its lanes' warps hold no valid
// errorPC; LLDB then shows no stop at all, faultline names the SM's
// exception), or else a dump requested while kernels ran.
func describeNoStop(g *model.GPU, d *CoreDump) {
	for i := range d.SMs {
		if sm := &d.SMs[i]; sm.Exception != 0 {
			g.Exception, g.ExceptionSource = sm.Exception.String(), string(FromSM)
			g.Notes = append(g.Notes, fmt.Sprintf("SM %d recorded %s, but no lane carries it (no warp on it holds a "+
				"valid errorPC): the thread shown is the first one, not necessarily the faulting one.", sm.ID, sm.Exception))
			return
		}
	}
	g.Exception = "no exception (dump requested while the kernel ran: a hang?)"
	g.Notes = append(g.Notes, "No lane has an exception: the dump was requested (CUDA_COREDUMP_PIPE or a "+
		"debugger) while kernels ran. The lanes' pcs show where each warp was; a kernel that stays at the same "+
		"pc across two dumps is spinning.")
}

// faultFrames symbolizes the faulting pc: the kernel, the offset and the
// inline chain. A missing code image loses the frames (with a problem),
// never the exception or the thread.
func faultFrames(g *model.GPU, c *model.Crash, d *CoreDump, t *Thread) {
	pc, ok := t.FaultPC()
	if !ok {
		return
	}
	var kernel *Location
	if !t.StandIn() {
		if gr := d.Grid(t.Warp.Device, t.Warp.GridID); gr != nil {
			if kl, _, err := d.Lookup(gr.FunctionEntry); err == nil && kl.Symbol != "" {
				kernel = &kl
			}
		}
	}
	loc, img, err := d.Lookup(pc)
	if err != nil {
		c.Problems = append(c.Problems, model.Problem{Message: "GPU core: " + err.Error()})
	} else {
		g.Kernel, g.KernelSymbol = loc.Function, loc.Symbol
		g.Offset = fmt.Sprintf("%s+%#x", loc.Section, loc.Offset)
		g.Frames = gpuFrames(c, g.ErrorPC, pc, loc, img)
	}
	// A fault inside a noinline device function: name the kernel the grid
	// launched, keep the function in the frames.
	if kernel != nil {
		g.Kernel, g.KernelSymbol = kernel.Function, kernel.Symbol
	}
}

// gpuFrames are the frames at the faulting pc: every inline level of its
// line information, or the function alone (with a problem) without it.
func gpuFrames(c *model.Crash, errorPC string, pc uint64, loc Location, img *Image) []model.Frame {
	if len(loc.Frames) == 0 {
		c.Problems = append(c.Problems, model.Problem{Module: img.Section,
			Message: "the faulting kernel has no line information: rebuild with -lineinfo (NVCC_PREPEND_FLAGS='-lineinfo')"})
	}
	return locationFrames(errorPC, pc, loc, img)
}

// locationFrames are the inline levels of loc, innermost first, or its
// function alone without line information.
func locationFrames(pcText string, pc uint64, loc Location, img *Image) []model.Frame {
	if len(loc.Frames) == 0 {
		return []model.Frame{{PC: pcText, Addr: pc, Function: loc.Function, Module: img.Section,
			Offset: loc.SymbolOffset, Trust: model.TrustContext}}
	}
	frames := make([]model.Frame, 0, len(loc.Frames))
	for i, fr := range loc.Frames {
		// Inline levels share the physical frame's trust: the pc comes
		// from the dump's warp state.
		frames = append(frames, model.Frame{Index: i, PC: pcText, Addr: pc, Module: img.Section,
			Function: fr.Function, File: fr.File, Line: fr.Line, Column: fr.Column,
			Inlined: i < len(loc.Frames)-1, Trust: model.TrustContext, Offset: loc.SymbolOffset})
	}
	return frames
}
