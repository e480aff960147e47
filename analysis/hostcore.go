package analysis

import (
	"fmt"

	"github.com/faultline-dev/faultline/analysis/classify"
)

// OpenWithHostCore opens a GPU core dump together with the CPU core dump
// of the process that launched its kernels: the host threads come from the
// CPU core, and the crashing thread is the one that launched the faulting
// grid (attrHostTid) when the CPU core has it.
func OpenWithHostCore(gpuDump, hostCore string, opt Options) (*Crash, error) {
	gc, err := Open(gpuDump, opt)
	if err != nil {
		return nil, err
	}
	if gc.Dump.Format != "cuda-core" || gc.GPU == nil {
		return nil, fmt.Errorf("%s is not a GPU core dump (it reads as %s)", gpuDump, gc.Dump.Format)
	}
	hc, err := Open(hostCore, opt)
	if err != nil {
		gc.Problems = append(gc.Problems, Problem{Message: fmt.Sprintf("host core %s: %v", hostCore, err)})
		return gc, nil
	}
	hc.GPU = gc.GPU
	hc.Dump.Format = "cuda-core"
	hc.Modules = append(hc.Modules, gc.Modules...)
	hc.Problems = append(hc.Problems, gc.Problems...)
	if t := gc.GPU.HostThread; t != 0 {
		found := false
		for i := range hc.Threads {
			found = found || hc.Threads[i].ID == t
		}
		if found {
			hc.CrashingThreadID = t
			for i := range hc.Threads {
				hc.Threads[i].Crashed = hc.Threads[i].ID == t
			}
		} else {
			hc.Problems = append(hc.Problems, Problem{Message: fmt.Sprintf(
				"the kernel was launched by host thread %d, which the CPU core does not have (another process or a later core?)", t)})
		}
	}
	hc.Classification = nil
	classify.Classify(hc, nil)
	return hc, nil
}
