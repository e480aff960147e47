package gitsrc

import (
	"github.com/faultline-dev/faultline/analysis"
)

// frameFunc is what the review knows of a frame's function: its name and
// line, and its extent from the module's DWARF (analysis.FunctionExtent).
func frameFunc(c *analysis.Crash, fs FrameSource) funcSpec {
	spec := funcSpec{name: fs.Function, line: fs.Line}
	if e, ok := analysis.FunctionExtent(c, fs.Thread, fs.Index); ok {
		spec.declFile, spec.declLine, spec.lastLine = e.File, e.DeclLine, e.LastLine
	}
	return spec
}
