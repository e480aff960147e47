package gitsrc

import (
	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/review"
)

// frameFunc is what the review knows of a frame's function: its name and
// line, and its extent from the module's DWARF (analysis.FunctionExtent).
func frameFunc(c *analysis.Crash, fs FrameSource) review.FuncSpec {
	spec := review.FuncSpec{Name: fs.Function, Line: fs.Line}
	if e, ok := analysis.FunctionExtent(c, fs.Thread, fs.Index); ok {
		spec.DeclFile, spec.DeclLine, spec.LastLine = e.File, e.DeclLine, e.LastLine
	}
	return spec
}
