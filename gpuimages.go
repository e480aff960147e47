package main

import (
	"errors"
	"fmt"
	"sort"

	"github.com/faultline-dev/faultline/analysis/amdgpu"
	"github.com/faultline-dev/faultline/analysis/cuda"
)

// gpuImage is one GPU code image `gpu-lines` resolves addresses in: an
// NVIDIA cubin or an AMD code object.
type gpuImage interface {
	Arch() string
	resolve(addr string) (gpuLine, error)
}

type cubinImage struct{ c *cuda.Cubin }

func (i cubinImage) Arch() string { return i.c.Arch() }

func (i cubinImage) resolve(addr string) (gpuLine, error) {
	loc, err := i.c.Resolve(addr)
	if err != nil {
		return gpuLine{}, err
	}
	l := gpuLine{Function: loc.Function, Section: loc.Section, Arch: i.c.Arch(),
		Offset: fmt.Sprintf("%#x", loc.Offset), Frames: loc.Frames}
	if l.Frames == nil {
		l.Frames = []cuda.Frame{}
	}
	return l, nil
}

type amdImage struct{ c *amdgpu.CodeObject }

func (i amdImage) Arch() string { return i.c.Target }

func (i amdImage) resolve(addr string) (gpuLine, error) {
	loc, err := i.c.Resolve(addr)
	if err != nil {
		return gpuLine{}, err
	}
	// The offset is the code object's address, as llvm-objdump and
	// llvm-symbolizer print it.
	l := gpuLine{Function: loc.Function, Section: loc.Section, Arch: i.c.Target,
		Offset: fmt.Sprintf("%#x", loc.Address), Frames: []cuda.Frame{}}
	for _, f := range loc.Frames {
		l.Frames = append(l.Frames, cuda.Frame{Function: f.Function, File: f.File, Line: f.Line, Column: f.Column})
	}
	return l, nil
}

// openGPUImages reads the GPU code in path: AMD code objects (bare, in
// offload bundles, or in a host binary's .hip_fatbin) or NVIDIA cubins
// (bare, or in fatbins). Cubins come newest architecture first, the one a
// current GPU would run; AMD code objects in file order.
func openGPUImages(path string) ([]gpuImage, []string, error) {
	cos, amdProblems, amdErr := amdgpu.OpenFile(path)
	if amdErr == nil {
		out := make([]gpuImage, 0, len(cos))
		for _, c := range cos {
			out = append(out, amdImage{c})
		}
		return out, amdProblems, nil
	}
	cubins, problems, err := cuda.OpenCubins(path)
	if err != nil {
		return nil, problems, errors.Join(err, amdErr)
	}
	sort.SliceStable(cubins, func(a, b int) bool { return archNumber(cubins[a].Arch()) > archNumber(cubins[b].Arch()) })
	out := make([]gpuImage, 0, len(cubins))
	for _, c := range cubins {
		out = append(out, cubinImage{c})
	}
	return out, problems, nil
}
