package report

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/classify"
	"github.com/faultline-dev/faultline/analysis/model"
)

// gpuNextSteps are the next steps for a GPU fault: the kind's own
// (classify.Kinds), then the vendor's tools.
func gpuNextSteps(c *model.Crash) []string {
	g := c.GPU
	where := "the faulting line"
	if len(g.Frames) > 0 && g.Frames[0].File != "" {
		where = fmt.Sprintf("%s:%d", g.Frames[0].File, g.Frames[0].Line)
	}
	out := classify.KindSteps(c, where)
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
