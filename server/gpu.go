package server

import (
	"fmt"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/model"
)

// The GPU side of a crash (Crash.GPU, from an NVIDIA GPU core dump or a
// compute-sanitizer / cuda-gdb / PyTorch log): the faulting instruction's
// whole inline chain, innermost first. Every level is a line where the
// faulting instruction sits: the innermost level's line is the access
// itself, each enclosing level's line is the call the level below was
// inlined from. Each level gets an Error diagnostic with the whole chain as
// relatedInformation, a lens "inline level K of N in KERNEL", and a hover.

// gpuDiagnosticCode is the code of GPU inline-level diagnostics.
const gpuDiagnosticCode = "gpu-fault"

// gpuSite is one GPU inline level placed in a local file.
type gpuSite struct {
	level model.InlineLevel
	site
}

// placeGPU resolves the GPU inline levels that have a line to local files.
func (v *view) placeGPU() {
	g := v.crash.GPU
	for _, lv := range g.InlineLevels() {
		fr := &g.Frames[lv.K-1]
		gs := gpuSite{level: lv, site: site{frame: fr}}
		if p := v.res.Resolve(fr, localExe(v.crash)); p != "" {
			gs.path, gs.uri, gs.line = p, uri.File(p), uint32(fr.Line-1)
			k := lineKey{p, gs.line}
			v.gpuByLine[k] = append(v.gpuByLine[k], len(v.gpu))
			if v.files[p] == nil {
				v.files[p] = readSource(p)
			}
		} else if !containsString(v.unresolved, fr.File) {
			v.unresolved = append(v.unresolved, fr.File)
		}
		v.gpu = append(v.gpu, gs)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// kernelName is the faulting kernel's name for messages.
func kernelName(g *analysis.GPU) string {
	if g.Kernel != "" {
		return g.Kernel
	}
	if n := len(g.Frames); n > 0 && g.Frames[n-1].Function != "" {
		return g.Frames[n-1].Function
	}
	return "the kernel"
}

// gpuException is the GPU fault in a few words: "GPU Warp Illegal Address".
func gpuException(g *analysis.GPU) string {
	if g.Exception == "" {
		return "GPU fault"
	}
	return "GPU " + g.Exception
}

// gpuSummary is the one-line summary of a GPU crash: the classification's
// when there is one, else "GPU Warp Illegal Address in crash_kernel —
// block (2,0,0) thread (101,0,0)".
func gpuSummary(c *analysis.Crash) string {
	if cl := c.Classification; cl != nil && cl.Summary != "" {
		return cl.Summary
	}
	g := c.GPU
	s := gpuException(g) + " in " + kernelName(g)
	switch {
	case g.Block != nil && g.Thread != nil:
		s += fmt.Sprintf(" — block %s thread %s", g.Block, g.Thread)
	case g.StandIn:
		s += " — " + g.ThreadName
	}
	return s
}

// gpuDiagnostics are the Error diagnostics of the GPU inline levels, by
// document (LSP 3.17 §"PublishDiagnostics Notification").
func (v *view) gpuDiagnostics(out map[uri.URI][]protocol.Diagnostic) {
	if len(v.gpu) == 0 {
		return
	}
	g := v.crash.GPU
	kernel := kernelName(g)
	related := v.gpuRelated()
	inner := funcName(&g.Frames[0])
	for _, gs := range v.gpu {
		if gs.path == "" {
			continue
		}
		var msg string
		if gs.level.K == 1 {
			msg = strings.TrimSuffix(gpuSummary(v.crash), ".") + " — " + gs.level.Title(kernel)
		} else {
			msg = fmt.Sprintf("%s in %s, inlined here into %s — %s", gpuException(g), inner,
				funcName(gs.frame), gs.level.Title(kernel))
		}
		out[gs.uri] = append(out[gs.uri], protocol.Diagnostic{
			Range:              v.lineRange(gs.site),
			Severity:           protocol.DiagnosticSeverityError,
			Source:             protocol.NewOptional(diagnosticSource),
			Code:               protocol.String(gpuDiagnosticCode),
			Message:            protocol.String(msg),
			RelatedInformation: related,
		})
	}
}

// gpuRelated is the whole inline chain as related information, innermost
// level first.
func (v *view) gpuRelated() []protocol.DiagnosticRelatedInformation {
	var out []protocol.DiagnosticRelatedInformation
	for _, gs := range v.gpu {
		if gs.path == "" || len(out) == maxRelated {
			continue
		}
		role := "inlined call"
		switch {
		case gs.level.K == 1:
			role = "faulting access"
		case gs.level.K == gs.level.N:
			role = "kernel"
		}
		out = append(out, protocol.DiagnosticRelatedInformation{
			Location: protocol.Location{URI: gs.uri, Range: v.lineRange(gs.site)},
			Message:  fmt.Sprintf("inline level %d of %d: %s — %s", gs.level.K, gs.level.N, funcName(gs.frame), role),
		})
	}
	return out
}

// gpuLenses are the lenses of the GPU levels on path's lines: "inline
// level K of N in KERNEL", which shows the next enclosing level's line
// (the kernel's wraps to the innermost), so clicks walk the chain.
func (v *view) gpuLenses(path string) []protocol.CodeLens {
	if len(v.gpu) == 0 {
		return nil
	}
	var out []protocol.CodeLens
	kernel := kernelName(v.crash.GPU)
	for i, gs := range v.gpu {
		if gs.path != path {
			continue
		}
		r := v.lineRange(gs.site)
		r.End = r.Start
		next := v.nextGPULevel(i)
		out = append(out, lens(r, gs.level.Title(kernel), CommandGotoFrame, map[string]int{"level": next}))
	}
	return out
}

// nextGPULevel is the K of the placed level after v.gpu[i], wrapping.
func (v *view) nextGPULevel(i int) int {
	for j := 1; j <= len(v.gpu); j++ {
		if gs := v.gpu[(i+j)%len(v.gpu)]; gs.path != "" {
			return gs.level.K
		}
	}
	return v.gpu[i].level.K
}

// gpuLevel returns the placed level with the given K.
func (v *view) gpuLevel(k int) (gpuSite, bool) {
	for _, gs := range v.gpu {
		if gs.level.K == k {
			return gs, true
		}
	}
	return gpuSite{}, false
}

// gpuHoverMarkdown describes the GPU fault at the levels idx (of v.gpu)
// on one line: where on the device, the exception, the inline chain with
// these levels marked, the classification and the notes.
func (v *view) gpuHoverMarkdown(idx []int) string {
	g := v.crash.GPU
	kernel := kernelName(g)
	var b strings.Builder
	here := map[int]bool{}
	var titles []string
	for _, i := range idx {
		here[v.gpu[i].level.K] = true
		titles = append(titles, v.gpu[i].level.Title("`"+kernel+"`"))
	}
	fmt.Fprintf(&b, "**%s** · %s\n\n", gpuException(g), strings.Join(titles, ", "))
	var where []string
	if g.Device != "" || g.Arch != "" {
		where = append(where, strings.TrimSpace(g.Device+" "+parenthesize(g.Arch)))
	}
	if l := g.Launch(); l != "" {
		where = append(where, "launch "+l)
	}
	if g.Block != nil && g.Thread != nil {
		where = append(where, fmt.Sprintf("block %s thread %s", g.Block, g.Thread))
	}
	if g.SM != nil && g.Warp != nil && g.Lane != nil {
		where = append(where, fmt.Sprintf("SM %d warp %d lane %d", *g.SM, *g.Warp, *g.Lane))
	}
	if g.StandIn {
		where = append(where, "thread `"+g.ThreadName+"`: the SM recorded the exception after its warps exited")
	}
	if len(where) > 0 {
		b.WriteString(strings.Join(where, " · ") + "\n\n")
	}
	var at []string
	if g.ErrorPC != "" {
		at = append(at, "pc `"+g.ErrorPC+"`")
	}
	if g.Offset != "" {
		at = append(at, "`"+g.Offset+"`")
	}
	if g.Address != "" {
		at = append(at, "address `"+g.Address+"`")
	}
	if len(at) > 0 {
		b.WriteString(strings.Join(at, " · ") + "\n\n")
	}
	b.WriteString("**Inline chain** (innermost first)\n\n")
	for i := range g.Frames {
		fr := &g.Frames[i]
		line := fmt.Sprintf("%d. `%s`", i+1, funcName(fr))
		if fr.File != "" {
			line += fmt.Sprintf(" · `%s:%d`", fr.File, fr.Line)
		}
		if here[i+1] {
			line += " ← this line"
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("\n")
	b.WriteString(classificationMarkdown(v.crash))
	if len(g.Notes) > 0 {
		b.WriteString("**Notes**\n\n")
		for _, n := range g.Notes {
			b.WriteString("- " + n + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func parenthesize(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

// classificationMarkdown is the crash's classification for hovers: its
// kind and context, summary, the runtime's message, and the evidence.
func classificationMarkdown(c *analysis.Crash) string {
	cl := c.Classification
	if cl == nil || (cl.Summary == "" && len(cl.Evidence) == 0) {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**Classification** · `%s`", cl.Kind)
	if cl.Context != "" && cl.Context != model.ContextRuntime {
		fmt.Fprintf(&b, " · %s", cl.Context)
	}
	b.WriteString("\n\n")
	if cl.Summary != "" {
		b.WriteString(cl.Summary + "\n\n")
	}
	if cl.Message != "" {
		fmt.Fprintf(&b, "Message: `%s`\n\n", strings.ReplaceAll(cl.Message, "`", "'"))
	}
	if len(cl.Evidence) > 0 {
		b.WriteString("Evidence:\n\n")
		for _, e := range cl.Evidence {
			b.WriteString("- " + e + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// gpuInfo is the GPU section of faultline/threads.
func (v *view) gpuInfo() *GPUInfo {
	g := v.crash.GPU
	if g == nil {
		return nil
	}
	info := &GPUInfo{Kernel: kernelName(g), Exception: g.Exception, Device: g.Device, Arch: g.Arch,
		Summary: gpuSummary(v.crash), Frames: make([]FrameInfo, 0, len(g.Frames))}
	if g.Block != nil && g.Thread != nil {
		info.Block, info.Thread = g.Block.String(), g.Thread.String()
	}
	info.ThreadName, info.StandIn, info.ThreadCount = g.ThreadName, g.StandIn, g.ThreadCount
	for _, t := range g.Threads {
		info.Threads = append(info.Threads, GPUThreadInfo{Name: t.Name, StandIn: t.StandIn, StopReason: t.StopReason,
			Function: t.Function, PC: t.PC, Selected: t.Selected})
	}
	placed := map[int]string{}
	for _, gs := range v.gpu {
		if gs.path != "" {
			placed[gs.level.K] = string(gs.uri)
		}
	}
	for i := range g.Frames {
		fr := &g.Frames[i]
		f := FrameInfo{Index: i, Function: fr.Function, File: fr.File, Line: fr.Line,
			Column: fr.Column, PC: fr.PC, Module: fr.Module, Inlined: fr.Inlined, Culprit: i == 0, URI: placed[i+1]}
		if f.URI == "" && v.src != nil {
			f.DocURI = string(frameDocURI(v.src.seq, gpuChainThread, i, fr))
		}
		info.Frames = append(info.Frames, f)
	}
	return info
}
