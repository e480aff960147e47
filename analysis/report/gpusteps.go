package report

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/model"
)

// gpuNextSteps are the next steps for a GPU fault, in the vendor's tools.
func gpuNextSteps(c *model.Crash) []string {
	g, cls := c.GPU, c.Classification
	var out []string
	where := "the faulting line"
	if len(g.Frames) > 0 && g.Frames[0].File != "" {
		where = fmt.Sprintf("%s:%d", g.Frames[0].File, g.Frames[0].Line)
	}
	switch cls.Kind {
	case model.KindGPUIllegalAddress:
		s := fmt.Sprintf("Check the index or pointer used at %s against the buffer it addresses", where)
		if al := g.Allocation; al != nil {
			s += fmt.Sprintf(": the access lands %d bytes %s an allocation of %d bytes", al.Distance, al.Relation, al.Size)
			if al.Size == 0 {
				s += " (an empty buffer: a zero-size launch input)"
			}
		}
		out = append(out, s+"; the block/thread indices above give the index's inputs.")
	case model.KindGPUMisaligned:
		out = append(out, fmt.Sprintf("Check the alignment of the pointer used at %s (a vector load/store of a pointer cast from a smaller type).", where))
	case model.KindGPUAssert:
		out = append(out, fmt.Sprintf("Read the device assertion at %s and find which launch input broke it.", where))
	case model.KindGPUHang:
		out = append(out, "Look for a loop or barrier the waiting threads cannot leave (a __syncthreads() in divergent code, a spin on a flag no one sets).")
	default:
		out = append(out, fmt.Sprintf("Start from %s.", where))
	}
	if g.Vendor == "amd" {
		return append(out, amdSteps(g)...)
	}
	return append(out, nvidiaSteps(g)...)
}

func nvidiaSteps(g *model.GPU) []string {
	var out []string
	if g.Source != "cuda-core" && g.Source != "compute-sanitizer" {
		out = append(out, "Rerun with CUDA_LAUNCH_BLOCKING=1 so the error is reported by the launch that faulted (asynchronous errors name a later call).")
	}
	if g.Source != "compute-sanitizer" {
		out = append(out, "Run it under `compute-sanitizer --tool memcheck --show-backtrace device` for the exact access, its address and the nearest allocation.")
	}
	if g.Source != "cuda-core" {
		out = append(out, "Capture a GPU core: CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 (CUDA_COREDUMP_FILE=core.%p.nvcudmp), then `faultline analyze core.*.nvcudmp` (or cuda-gdb) for every lane and the full inline chain.")
	}
	if g.Offset != "" && len(g.Frames) < 2 {
		out = append(out, fmt.Sprintf("Resolve the full inline chain from the binary built with -lineinfo: `faultline gpu-lines APP %s`.", g.Offset))
	}
	return out
}

func amdSteps(g *model.GPU) []string {
	out := []string{
		"Rerun with AMD_SERIALIZE_KERNEL=3 (and HIP_LAUNCH_BLOCKING=1) so the fault is reported by the kernel that caused it, not a later call.",
	}
	if g.Source != "rocm-debug-agent" {
		out = append(out, "Load the ROCm debug agent (HSA_TOOLS_LIB=librocm-debug-agent.so.2): it prints the faulting wave, its pc and the code object on a memory violation.")
	}
	if g.Source != "rocgdb" {
		out = append(out, "Run it under rocgdb (`rocgdb --args …`, then `bt` in the AMDGPU Wave thread that stopped) for the wave's device stack.")
	}
	if g.ErrorPC != "" && g.CodeObject != "" && len(g.Frames) < 2 {
		out = append(out, fmt.Sprintf("Resolve the pc's inline chain from the code object (built with -g): `faultline gpu-lines FILE %s`.", orDefault(g.Offset, g.ErrorPC)))
	}
	return out
}
