package report

import (
	"fmt"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// writeGPUMarkdown writes the report of a GPU fault (a GPU core dump or a
// GPU crash log) in the shape GPU debugging takes: the GPU signal (the
// exception, the access and the address's relation to the nearest
// allocation), the kernel and the faulting thread in grid terms, the
// device inline chain with source lines, the host stack that launched it,
// evidence and next steps for the vendor's tools.
func writeGPUMarkdown(p *printer, c *model.Crash, determinism, h string) {
	g, cls := c.GPU, c.Classification
	p.f("%s GPU Crash Analysis: %s\n\n", h, c.Dump.Path)
	p.f("**GPU signal:** %s  \n", gpuSignalLine(g))
	p.f("**Kernel:** %s  \n", gpuKernelLine(g))
	p.f("**Faulting thread:** %s  \n", orDefault(g.ThreadDescription(), "not in this input"))
	if pc := gpuPCLine(g); pc != "" {
		p.f("**Faulting instruction:** %s  \n", pc)
	}
	p.f("**Read from:** %s  \n", gpuSourceLine(g, c))
	if determinism == "" {
		determinism = "unknown (single occurrence)"
	}
	p.f("**Determinism:** %s  \n", determinism)
	p.f("**Kind:** `%s`  \n", cls.Kind)
	p.f("**Signature:** `%s`\n\n", cls.Signature)

	p.f("%s# Device call chain\n\n", h)
	deviceChain(p, g)
	gpuThreadRows(p, g, h)
	p.f("%s# Host launch stack\n\n", h)
	if t := c.CrashingThread(); t != nil && len(t.Frames) > 0 {
		callChain(p, c, *t, cls.CulpritFrame)
	} else {
		p.f("Not in this input (a GPU core or a runtime's fault message holds no host stack: the CPU core of the same run, compute-sanitizer's \"Host Frame\" lines or rocgdb's host threads have it).\n\n")
	}
	p.f("%s# Root cause hypothesis\n\n%s\n\n", h, cls.Summary)
	for _, n := range g.Notes {
		p.f("- %s\n", n)
	}
	if len(g.Notes) > 0 {
		p.f("\n")
	}
	p.f("%s# Evidence\n\n", h)
	for _, e := range cls.Evidence {
		p.f("- %s\n", e)
	}
	p.f("\n%s# Recommended next steps\n\n", h)
	for i, s := range gpuNextSteps(c) {
		p.f("%d. %s\n", i+1, s)
	}
	problemsSection(p, c, h)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func gpuSignalLine(g *model.GPU) string {
	s := orDefault(g.Exception, orDefault(g.Reason, "unknown GPU error"))
	if g.Reason != "" && g.Reason != g.Exception && g.Exception != "" {
		s += " (" + g.Reason + ")"
	}
	if g.Address != "" {
		s += " at address " + g.Address
	}
	if d := g.AccessDescription(); d != "" {
		s += ": " + d
	}
	return s
}

func gpuKernelLine(g *model.GPU) string {
	if g.Kernel == "" {
		return "not named in this input"
	}
	s := "`" + g.Kernel + "`"
	var on []string
	for _, v := range []string{g.Arch, g.Device} {
		if v != "" {
			on = append(on, v)
		}
	}
	if l := g.Launch(); l != "" {
		on = append(on, "launched "+l)
	}
	if len(on) > 0 {
		s += " (" + strings.Join(on, ", ") + ")"
	}
	return s
}

func gpuPCLine(g *model.GPU) string {
	var parts []string
	if g.Offset != "" {
		parts = append(parts, "`"+g.Offset+"`")
	}
	if g.ErrorPC != "" {
		parts = append(parts, "pc "+g.ErrorPC)
	}
	if g.CodeObject != "" {
		parts = append(parts, "code object "+g.CodeObject)
	}
	return strings.Join(parts, ", ")
}

func gpuSourceLine(g *model.GPU, c *model.Crash) string {
	vendor := map[string]string{"nvidia": "NVIDIA", "amd": "AMD"}[g.Vendor]
	return strings.TrimSpace(vendor + " " + orDefault(g.Source, c.Dump.Format))
}

func deviceChain(p *printer, g *model.GPU) {
	if len(g.Frames) == 0 {
		p.f("The input names no device frames.\n\n")
		return
	}
	p.f("| Level | Function | Source |\n|---|---|---|\n")
	for i, f := range g.Frames {
		idx, fn := fmt.Sprintf("#%d", i), "`"+escapeCell(orDefault(f.Function, "??"))+"`"
		if i < len(g.Frames)-1 {
			fn += " (inlined)"
		} else if g.Kernel != "" {
			fn += " (kernel)"
		}
		if i == 0 {
			idx, fn = "**"+idx+"**", fn+" ← faulting access"
		}
		src := "-"
		if f.File != "" {
			src = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		p.f("| %s | %s | %s |\n", idx, fn, escapeCell(src))
	}
	p.f("\n")
}

// gpuThreadRows lists a GPU core dump's threads as LLDB's `thread list`
// aggregates them: one row per stop reason and place, stand-ins for an
// SM-level exception by their name ("device 0 SM 4 (no kernel context)")
// or, several at one place, as "no kernel context".
func gpuThreadRows(p *printer, g *model.GPU, h string) {
	if len(g.ThreadRows) == 0 {
		return
	}
	stopped := 0
	for _, t := range g.Threads {
		if t.StopReason != "" {
			stopped++
		}
	}
	p.f("%s# GPU threads\n\n", h)
	p.f("%d %s in the dump", g.ThreadCount, plural(g.ThreadCount, "thread", "threads"))
	if len(g.Threads) == g.ThreadCount {
		p.f(", %d with a stop reason", stopped)
	}
	p.f("; threads at the same pc with the same stop reason share a row.\n\n")
	p.f("| Threads | Thread | Stop reason | Function | pc |\n|---|---|---|---|---|\n")
	for _, r := range g.ThreadRows {
		fn := "-"
		if r.Function != "" {
			fn = "`" + escapeCell(r.Function) + "`"
		}
		p.f("| %d | %s | %s | %s | %s |\n", r.Count, escapeCell(r.Label), escapeCell(orDefault(r.StopReason, "-")), fn, r.PC)
	}
	if g.ThreadRowsOmitted > 0 {
		p.f("\n%d more threads at other places are not listed.\n", g.ThreadRowsOmitted)
	}
	p.f("\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// gpuText is the GPU part of the terminal report: the signal, kernel,
// faulting thread and the device inline chain, innermost first.
func gpuText(p *printer, g *model.GPU) {
	p.f("gpu:       %s\n", gpuSignalLine(g))
	if g.Kernel != "" {
		p.f("kernel:    %s\n", g.Kernel)
	}
	if t := g.ThreadDescription(); t != "" {
		p.f("gpu thread: %s\n", t)
	}
	if pc := gpuPCLine(g); pc != "" {
		p.f("gpu pc:    %s\n", strings.ReplaceAll(pc, "`", ""))
	}
	for i, f := range g.Frames {
		inl := ""
		if i < len(g.Frames)-1 {
			inl = " [inlined]"
		}
		p.f("  device #%d %s at %s:%d%s\n", i, orDefault(f.Function, "??"), f.File, f.Line, inl)
	}
	if len(g.ThreadRows) > 0 {
		p.f("gpu threads: %d\n", g.ThreadCount)
		for _, r := range g.ThreadRows {
			p.f("  %s\n", r)
		}
	}
}
