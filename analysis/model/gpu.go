package model

import (
	"fmt"
	"strings"
)

// GPU describes a GPU-side crash: the device, the kernel and where in it the
// fault happened, with the full inline chain of the faulting pc.
//
// It comes from an NVIDIA GPU core dump (dump.format "cuda-core") or from
// a GPU crash log (compute-sanitizer, cuda-gdb, a PyTorch "CUDA error"
// traceback); logs fill what they print.
type GPU struct {
	// Vendor is "nvidia" or "amd".
	Vendor string `json:"vendor,omitempty"`
	// Source is what the GPU state was read from: "cuda-core",
	// "compute-sanitizer", "cuda-gdb", "pytorch", "rocm", "rocgdb",
	// "rocm-debug-agent", "jax-xla".
	Source string `json:"source,omitempty"`
	// Device is the GPU's name, "NVIDIA H100 80GB HBM3" ("GPU node-2"
	// where ROCm names only the node).
	Device string `json:"device,omitempty"`
	// Arch is the SM architecture of the faulting code, "sm_90".
	Arch string `json:"arch,omitempty"`
	// Kernel is the faulting kernel, demangled without parameters (a
	// noinline device function when the fault is inside one: KernelSymbol
	// then names the kernel's own symbol).
	Kernel string `json:"kernel,omitempty"`
	// KernelSymbol is the kernel's symbol (mangled) as the cubin names it.
	KernelSymbol string `json:"kernelSymbol,omitempty"`
	// GridDim and BlockDim are the launch dimensions, <<<grid, block>>>.
	GridDim  *Dim3 `json:"gridDim,omitempty"`
	BlockDim *Dim3 `json:"blockDim,omitempty"`
	// Block and Thread are blockIdx and threadIdx of the faulting thread.
	Block  *Dim3 `json:"block,omitempty"`
	Thread *Dim3 `json:"thread,omitempty"`
	// SM, Warp and Lane locate the faulting thread on the device.
	SM   *int `json:"sm,omitempty"`
	Warp *int `json:"warp,omitempty"`
	Lane *int `json:"lane,omitempty"`
	// ThreadName is the faulting thread's name in a GPU core dump as
	// LLDB's nvgpu-core reader names it: "blockIdx(x=2 y=0 z=0)
	// threadIdx(x=101 y=0 z=0)", or "device 0 SM 4 (no kernel context)"
	// when StandIn.
	ThreadName string `json:"threadName,omitempty"`
	// StandIn says the fault is an SM-level exception whose warps had all
	// exited before the dump was written: no block, thread, warp or lane
	// is left, only the SM, its exception and its errorPC.
	StandIn bool `json:"standIn,omitempty"`
	// Exception is the CUDA exception as cuda-gdb names it ("Warp Illegal
	// Address"), or the runtime's error for logs.
	Exception string `json:"exception,omitempty"`
	// ExceptionSource is the row of a GPU core dump the exception was read
	// from: "lane" (the lane's own), "warp" (the SM's, which an active lane
	// of a warp with a valid errorPC carries), "sm" (the SM's, on a
	// stand-in).
	ExceptionSource string `json:"exceptionSource,omitempty"`
	// ErrorPC is the device address of the faulting instruction; Offset is
	// the same as "section+0xOFF" within its cubin, as nvdisasm prints it.
	ErrorPC string `json:"errorPC,omitempty"`
	Offset  string `json:"offset,omitempty"`
	// PC is the faulting thread's own pc (a lane's virtual PC), which an
	// imprecise exception leaves past ErrorPC.
	PC string `json:"pc,omitempty"`
	// Registers are the faulting thread's SASS registers (PC, errorPC,
	// R0.., RZ, P0..P7, UR0.., URZ, UP0..UP7) from a GPU core dump; a
	// stand-in has PC and errorPC only.
	Registers map[string]string `json:"registers,omitempty"`
	// Address is the memory address the faulting access used, when known
	// (compute-sanitizer and ROCm's memory-fault message print it).
	Address string `json:"address,omitempty"`
	// Access is the faulting access (kind, size, memory space) when known.
	Access *GPUAccess `json:"access,omitempty"`
	// Allocation relates Address to the nearest allocation (compute-sanitizer).
	Allocation *GPUAllocation `json:"allocation,omitempty"`
	// Reason is the driver's or runtime's word on the fault: ROCm's "Page
	// not present or supervisor privilege", an HSA status, a HIP error.
	Reason string `json:"reason,omitempty"`
	// Wave is the AMD wave ("1:1:1:1", agent:queue:dispatch:wave) and
	// Queue the HSA queue, when known.
	Wave  string `json:"wave,omitempty"`
	Queue string `json:"queue,omitempty"`
	// CodeObject is the AMD code object holding ErrorPC (a ROCm URI,
	// "file:///app#offset=16384&size=8808"), when the log names it.
	CodeObject string `json:"codeObject,omitempty"`
	// Frames is the inline chain at ErrorPC, innermost first: every
	// level but the last has Inlined set; the last is the kernel (or the
	// noinline function) itself.
	Frames []Frame `json:"frames,omitempty"`
	// HostThread is the host thread (LWP) that launched the kernel; with a
	// CPU core, Crash.Threads holds its stack.
	HostThread int `json:"hostThread,omitempty"`
	// Notes are caveats a reader must know, such as that an asynchronous
	// error may name a later kernel than the faulting one.
	Notes []string `json:"notes,omitempty"`
	// ThreadCount is the number of GPU threads of a GPU core dump; Threads
	// lists them (those with a stop reason first, at most
	// MaxListedGPUThreads) and ThreadRows aggregates them all by stop
	// reason and place, as LLDB's `thread list` does.
	ThreadCount       int            `json:"threadCount,omitempty"`
	Threads           []GPUThread    `json:"threads,omitempty"`
	ThreadRows        []GPUThreadRow `json:"threadRows,omitempty"`
	ThreadRowsOmitted int            `json:"threadRowsOmitted,omitempty"`
}

// MaxListedGPUThreads bounds GPU.Threads: a full H100 holds 270,336 lanes.
const MaxListedGPUThreads = 128

// GPUThread is one thread of a GPU core dump: a lane, or the stand-in of
// an SM whose exception outlived its warps.
type GPUThread struct {
	Name    string `json:"name"` // as ThreadName
	StandIn bool   `json:"standIn,omitempty"`
	Device  int    `json:"device"`
	SM      int    `json:"sm"`
	Warp    *int   `json:"warp,omitempty"`
	Lane    *int   `json:"lane,omitempty"`
	Block   *Dim3  `json:"block,omitempty"`
	Thread  *Dim3  `json:"thread,omitempty"`
	// PC is the thread's frame 0 (a stand-in's is its SM's errorPC, 0x0
	// when the SM recorded none); ErrorPC is its warp's valid errorPC.
	PC      string `json:"pc"`
	ErrorPC string `json:"errorPC,omitempty"`
	// StopReason is the stop as LLDB describes it, "CUDA Exception: Warp
	// Illegal Address" or "trap"; "" for a thread that just ran.
	StopReason      string `json:"stopReason,omitempty"`
	Exception       string `json:"exception,omitempty"`
	ExceptionSource string `json:"exceptionSource,omitempty"`
	// Function is the innermost function at PC, when a code image holds it.
	Function string `json:"function,omitempty"`
	// Selected marks the thread the GPU section describes.
	Selected bool `json:"selected,omitempty"`
	// Frames are the inline levels at PC, innermost first.
	Frames []Frame `json:"frames,omitempty"`
}

// GPUThreadRow is one row of the aggregated GPU thread list: threads with
// the same stop reason at the same place. Stand-ins and lanes never share
// a row; a row of several stand-ins is labelled "no kernel context".
type GPUThreadRow struct {
	Count      int    `json:"count"`
	Label      string `json:"label"`
	StandIn    bool   `json:"standIn,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	Function   string `json:"function,omitempty"`
	PC         string `json:"pc"`
}

// String is the row as LLDB's `thread list` prints it: "3 thread(s): no
// kernel context, stop reason = CUDA Exception: Device Illegal Address".
func (r GPUThreadRow) String() string {
	s := fmt.Sprintf("%d thread(s): %s", r.Count, r.Label)
	if r.StopReason != "" {
		s += ", stop reason = " + r.StopReason
	}
	return s
}

// GPUAccess is a faulting memory access.
type GPUAccess struct {
	Kind  string `json:"kind"`            // "read", "write", "atomic"
	Size  int    `json:"size,omitempty"`  // bytes
	Space string `json:"space,omitempty"` // "global", "shared", "local"
}

// GPUAllocation is the allocation nearest to a bad address.
type GPUAllocation struct {
	Address string `json:"address"`
	Size    uint64 `json:"size"`
	// Distance is how far Address lies from it and Relation which side:
	// "after" its end, "before" its start.
	Distance uint64 `json:"distance"`
	Relation string `json:"relation"`
}

// Dim3 is a CUDA dim3 / uint3.
type Dim3 struct {
	X uint32 `json:"x"`
	Y uint32 `json:"y"`
	Z uint32 `json:"z"`
}

func (d Dim3) String() string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

// Launch is "<<<grid, block>>>", "" when the dimensions are not known
// (absent, or zero: a GPU core dump whose grid table has no row for the
// faulting CTA's grid reads them as zero).
func (g *GPU) Launch() string {
	if g.GridDim == nil || g.BlockDim == nil || *g.GridDim == (Dim3{}) || *g.BlockDim == (Dim3{}) {
		return ""
	}
	return fmt.Sprintf("<<<%s, %s>>>", g.GridDim, g.BlockDim)
}

// InlineLevel is one level of the GPU fault's inline chain as an editor
// shows it: a diagnostic on its line with the whole chain as related
// information, and a lens "inline level K of N in KERNEL".
type InlineLevel struct {
	Frame Frame
	// K counts from the innermost level (1) to the kernel's own line (N).
	K, N int
}

// Title is the lens text, "inline level 2 of 5 in crash_kernel".
func (l InlineLevel) Title(kernel string) string {
	return fmt.Sprintf("inline level %d of %d in %s", l.K, l.N, kernel)
}

// InlineLevels lists the levels of Frames that have a source line.
func (g *GPU) InlineLevels() []InlineLevel {
	if g == nil {
		return nil
	}
	var out []InlineLevel
	for i, f := range g.Frames {
		if f.File == "" || f.Line <= 0 {
			continue
		}
		out = append(out, InlineLevel{Frame: f, K: i + 1, N: len(g.Frames)})
	}
	return out
}

// ThreadDescription names the faulting thread the vendor's way: "block
// (17,0,0), thread (3,0,0), SM 4, warp 2, lane 3" for NVIDIA, "work-group
// (17,0,0), work-item (3,0,0), wave 1:1:1:1, lane 3" for AMD, "device 0
// SM 4 (no kernel context)" for an SM-level stand-in; "" when nothing is
// known.
func (g *GPU) ThreadDescription() string {
	if g.StandIn {
		return g.ThreadName
	}
	var parts []string
	block, thread := "block", "thread"
	if g.Vendor == "amd" {
		block, thread = "work-group", "work-item"
	}
	if g.Block != nil {
		parts = append(parts, block+" "+g.Block.String())
	}
	if g.Thread != nil {
		parts = append(parts, thread+" "+g.Thread.String())
	}
	if g.Wave != "" {
		parts = append(parts, "wave "+g.Wave)
	}
	if g.SM != nil {
		parts = append(parts, fmt.Sprintf("SM %d", *g.SM))
	}
	if g.Warp != nil {
		parts = append(parts, fmt.Sprintf("warp %d", *g.Warp))
	}
	if g.Lane != nil {
		parts = append(parts, fmt.Sprintf("lane %d", *g.Lane))
	}
	return strings.Join(parts, ", ")
}

// AccessDescription is "a global write of 4 bytes, 16 bytes after the
// nearest allocation (0x7f3c00000000, 0 bytes)" from Access and
// Allocation; "" when neither is known.
func (g *GPU) AccessDescription() string {
	var parts []string
	if ac := g.Access; ac != nil {
		s := strings.TrimSpace(ac.Space + " " + ac.Kind)
		if ac.Size > 0 {
			s += fmt.Sprintf(" of %d bytes", ac.Size)
		}
		parts = append(parts, "a "+s)
	}
	if al := g.Allocation; al != nil {
		parts = append(parts, fmt.Sprintf("%d bytes %s the nearest allocation (%s, %d bytes)", al.Distance, al.Relation,
			al.Address, al.Size))
	}
	return strings.Join(parts, ", ")
}
