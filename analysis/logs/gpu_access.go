package logs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// reAllocation reads compute-sanitizer's "and is 16 bytes after the
// nearest allocation at 0x7f3c00000000 of size 0 bytes" ("before" for
// underflows).
var reAllocation = lazyregexp.New(`is (\d+) bytes? (after|before) the nearest allocation at (0x[0-9a-fA-F]+) of size (\d+) bytes?`)

// SanitizerAccess is the faulting access and the allocation nearest to
// its address, as compute-sanitizer describes them; nil what it does not.
func SanitizerAccess(e SanitizerError) (*model.GPUAccess, *model.GPUAllocation) {
	var ac *model.GPUAccess
	if e.Access != "" {
		ac = &model.GPUAccess{Kind: e.Access, Size: e.Size, Space: strings.Trim(e.Space, "_")}
	}
	var al *model.GPUAllocation
	if m := reAllocation.FindStringSubmatch(strings.Join(e.AddressNote, " ")); m != nil {
		dist, _ := strconv.ParseUint(m[1], 10, 64)
		size, _ := strconv.ParseUint(m[4], 10, 64)
		al = &model.GPUAllocation{Address: strings.ToLower(m[3]), Size: size, Distance: dist, Relation: m[2]}
	}
	return ac, al
}

// FillROCm fills a crash model from a ROCm fault log: the GPU section
// (AMD; the kernel, the fault address and its reason, the HSA status or
// HIP error, the wave, the code object and pc) and, where the log has
// them, the wave's device frames and the Python stack that reached HIP.
func FillROCm(c *model.Crash, l *ROCmLog) {
	g := &model.GPU{Vendor: "amd", Source: rocmSource(l), Kernel: l.Kernel}
	c.GPU = g
	switch {
	case l.HasNode:
		g.Exception = fmt.Sprintf("Memory access fault by GPU node-%d", l.Node)
		g.Device = fmt.Sprintf("GPU node-%d", l.Node)
		g.Reason = l.Reason
	case l.HSAStatus != "":
		g.Exception = l.HSAStatus
		g.Reason = l.HSAMessage
	case l.WaveReason != "":
		g.Exception = l.WaveReason
	case l.Signal != "":
		g.Exception = waveSignal(l.Signal)
	case l.HIPError != "":
		g.Exception = l.HIPError
		g.Reason = l.HIPMessage
	}
	if l.HSAStatus != "" && g.Exception != l.HSAStatus {
		g.Notes = append(g.Notes, "HSA status: "+strings.TrimSpace(l.HSAStatus+" "+l.HSAMessage))
	}
	if l.HIPError != "" && g.Exception != l.HIPError {
		g.Notes = append(g.Notes, "HIP error: "+strings.TrimSpace(l.HIPError+" "+l.HIPMessage))
	}
	if l.Runtime != "" {
		g.Notes = append(g.Notes, "reported as: "+l.Runtime)
	}
	if l.HasAddress {
		g.Address = fmt.Sprintf("%#x", l.Address)
	}
	if l.Queue != 0 {
		g.Queue = fmt.Sprintf("%#x", l.Queue)
	}
	if l.PC != 0 {
		g.ErrorPC = fmt.Sprintf("%#x", l.PC)
		if l.LoadBase != 0 && l.PC >= l.LoadBase {
			g.Offset = fmt.Sprintf("%#x", l.PC-l.LoadBase)
		}
	}
	g.CodeObject = l.CodeObject
	rocmWave(g, l)
	if len(g.Frames) == 0 && l.CodeObject != "" && l.PC >= l.LoadBase && l.LoadBase != 0 {
		frames, arch, err := codeObjectChain(l.CodeObject, l.PC-l.LoadBase)
		if err != nil {
			c.Problems = append(c.Problems, model.Problem{Message: "device frames: " + err.Error()})
		}
		g.Frames, g.Arch = frames, arch
	}
	if l.HIPError != "" || l.HSAStatus != "" {
		g.Notes = append(g.Notes, ROCmAsyncCaveat)
	}
	if len(l.PyFrames) > 0 {
		t := model.Thread{ID: 1, Crashed: true, Name: "python"}
		for i := len(l.PyFrames) - 1; i >= 0; i-- { // innermost first
			f := l.PyFrames[i]
			t.Frames = append(t.Frames, model.Frame{Index: len(t.Frames), Function: f.Function, File: f.File,
				Line: f.Line, Trust: model.TrustContext})
		}
		c.Threads, c.CrashingThreadID = []model.Thread{t}, 1
	}
}

// ROCmAsyncCaveat: HIP, like CUDA, reports kernel faults at a later call.
const ROCmAsyncCaveat = "HIP reports kernel faults asynchronously: the error surfaces at the next call that synchronizes with the GPU, so the host line (and a kernel named in the message) may belong to a later launch; AMD_SERIALIZE_KERNEL=3 makes every launch wait."

// waveSignal names the wave exception rocgdb reports as a signal (ROCgdb's
// manual: memory violations stop the wave with SIGSEGV, aperture
// violations with SIGBUS, and so on).
func waveSignal(sig string) string {
	switch sig {
	case "SIGSEGV":
		return "memory violation (SIGSEGV)"
	case "SIGBUS":
		return "aperture violation (SIGBUS)"
	case "SIGILL":
		return "illegal instruction (SIGILL)"
	case "SIGFPE":
		return "arithmetic exception (SIGFPE)"
	case "SIGABRT", "SIGTRAP":
		return "assert trap (" + sig + ")"
	}
	return sig
}

func rocmSource(l *ROCmLog) string {
	switch {
	case l.Wave != nil:
		return "rocgdb"
	case l.WaveReason != "" || l.CodeObject != "":
		return "rocm-debug-agent"
	case strings.HasPrefix(l.Runtime, "INTERNAL") || strings.Contains(l.Runtime, "XlaRuntimeError"):
		return "jax-xla"
	case len(l.PyFrames) > 0:
		return "pytorch"
	}
	return "rocm"
}

func rocmWave(g *model.GPU, l *ROCmLog) {
	w := l.Wave
	if w == nil {
		return
	}
	g.Wave = fmt.Sprintf("%d:%d:%d:%d", w.Agent, w.Queue, w.Dispatch, w.WaveID)
	g.Block = &model.Dim3{X: w.WorkGroup[0], Y: w.WorkGroup[1], Z: w.WorkGroup[2]}
	if w.HasWorkItem {
		g.Thread = &model.Dim3{X: w.WorkItem[0], Y: w.WorkItem[1], Z: w.WorkItem[2]}
	}
	if w.HasLane {
		lane := w.Lane
		g.Lane = &lane
	}
	for i, f := range l.Frames {
		g.Frames = append(g.Frames, model.Frame{Index: i, Function: f.Function, File: f.File, Line: f.Line,
			Inlined: i < len(l.Frames)-1, Trust: model.TrustContext})
		if f.HasPC && i == 0 {
			g.ErrorPC = fmt.Sprintf("%#x", f.PC)
		}
	}
}
