package classify

import (
	"fmt"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// gpu classifies a GPU fault: the kind from the exception, the runtime's
// reason and status; the context is the kernel; the culprit is the host
// frame that launched it (the device chain's innermost level is where the
// fault happened, GPU.Frames[0]); the signature is the kernel and its
// device frames, so the same fault groups whatever the host did.
func (a *analyzer) gpu() {
	g := a.c.GPU
	a.cls.Context = model.ContextGPUKernel
	a.cls.CulpritFrame = a.gpuLaunchSite()
	a.cls.Kind = gpuKind(g)
	a.cls.Signature = gpuSignature(g)
	a.gpuEvidence()
	a.cls.Summary = gpuSummary(g)
}

// gpuLaunchSite is the host frame that launched the work: the culprit
// past frames of installed Python packages (torch, jax), which only pass
// the call on to the GPU runtime.
func (a *analyzer) gpuLaunchSite() int {
	i := a.cls.CulpritFrame
	for i >= 0 && i < len(a.frames)-1 && isPackageFrame(a.frames[i]) {
		i++
	}
	return i
}

func isPackageFrame(f model.Frame) bool {
	return strings.Contains(f.File, "/site-packages/") || strings.Contains(f.File, "/dist-packages/")
}

// gpuKind reads the kind from everything the GPU section says.
func gpuKind(g *model.GPU) string {
	text := strings.ToLower(strings.Join([]string{g.Exception, g.Reason}, " "))
	switch {
	case strings.Contains(text, "illegal instruction") || strings.Contains(text, "invalid pc") ||
		strings.Contains(text, "misaligned pc") || strings.Contains(text, "pc overflow"):
		return model.KindGPUIllegalInstr
	case strings.Contains(text, "misaligned"):
		return model.KindGPUMisaligned
	case strings.Contains(text, "assert"):
		return model.KindGPUAssert
	case strings.Contains(text, "timeout") || strings.Contains(text, "timed out") || strings.Contains(text, "hang") ||
		strings.Contains(text, "watchdog"):
		return model.KindGPUHang
	case strings.Contains(text, "illegal") || strings.Contains(text, "out of range") || strings.Contains(text, "address") ||
		strings.Contains(text, "aperture") || strings.Contains(text, "page not present") ||
		strings.Contains(text, "memory_violation") || strings.Contains(text, "memory violation") ||
		strings.Contains(text, "read-only page") || (g.Access != nil && g.Address != ""):
		return model.KindGPUIllegalAddress
	}
	return model.KindUnknown
}

// gpuSignature is "KERNEL | innermost device frames…" (three at most,
// the kernel's own level left out); without device frames the kernel and
// the error, so that runs of the same fault group together.
func gpuSignature(g *model.GPU) string {
	parts := []string{orDefault(g.Kernel, "??")}
	for _, f := range g.Frames {
		if len(parts) == 4 {
			break
		}
		if f.Function == "" || f.Function == g.Kernel || f.Function == parts[len(parts)-1] {
			continue
		}
		parts = append(parts, f.Function)
	}
	if len(parts) == 1 {
		// "Illegal Address" of "Illegal Address: Invalid __global__ write…".
		if e, _, _ := strings.Cut(orDefault(g.Exception, g.Reason), ":"); e != "" {
			parts = append(parts, strings.TrimSpace(e))
		}
	}
	return "gpu: " + strings.Join(parts, " | ")
}

func (a *analyzer) gpuEvidence() {
	g := a.c.GPU
	src := orDefault(g.Source, "GPU")
	if g.Exception != "" {
		a.evidence("%s: %s", src, g.Exception)
	}
	if g.Reason != "" && g.Reason != g.Exception {
		a.evidence("reason: %s", g.Reason)
	}
	if pc := gpuPC(g); pc != "" {
		a.evidence("faulting instruction: %s", pc)
	}
	if t := g.ThreadDescription(); t != "" {
		a.evidence("faulting thread: %s", t)
	}
	if g.Address != "" {
		a.evidence("address %s%s", g.Address, accessSuffix(g))
	}
	if len(g.Frames) > 0 && g.Frames[0].File != "" {
		f := g.Frames[0]
		a.evidence("device source: %s at %s:%d (inline level 1 of %d in %s)", f.Function, f.File, f.Line,
			len(g.Frames), orDefault(g.Kernel, "the kernel"))
	}
	if i := a.cls.CulpritFrame; i >= 0 && i < len(a.frames) {
		f := a.frames[i]
		where := a.frameName(f)
		if f.File != "" {
			where += fmt.Sprintf(" (%s:%d)", f.File, f.Line)
		}
		a.evidence("host launch site: %s, frame #%d of the host stack", where, f.Index)
	}
}

// gpuPC is "KERNEL+0xOFF (pc 0x...)" from what is known, "" if nothing.
func gpuPC(g *model.GPU) string {
	var parts []string
	if g.Offset != "" {
		parts = append(parts, g.Offset)
	}
	if g.ErrorPC != "" {
		parts = append(parts, "pc "+g.ErrorPC)
	}
	return strings.Join(parts, ", ")
}

func gpuSummary(g *model.GPU) string {
	what := orDefault(g.Exception, orDefault(g.Reason, "fault"))
	s := "GPU " + what
	if g.Address != "" {
		s += " at address " + g.Address + accessSuffix(g)
	}
	if g.Kernel != "" {
		s += " in kernel " + g.Kernel
	}
	if len(g.Frames) > 0 && g.Frames[0].File != "" {
		s += fmt.Sprintf(" (%s:%d)", g.Frames[0].File, g.Frames[0].Line)
	}
	if t := g.ThreadDescription(); t != "" {
		s += ", " + t
	}
	return s + "."
}

// accessSuffix is ": " and the access description, "" without one.
func accessSuffix(g *model.GPU) string {
	if d := g.AccessDescription(); d != "" {
		return ": " + d
	}
	return ""
}
