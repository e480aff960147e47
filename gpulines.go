package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/faultline-dev/faultline/analysis/amdgpu"
	"github.com/faultline-dev/faultline/analysis/cuda"
)

// gpuLine is one entry of `faultline gpu-lines --json`: the inline chain
// of one address, innermost frame first.
type gpuLine struct {
	Address  string       `json:"address"`
	Function string       `json:"function"`
	Section  string       `json:"section,omitempty"`
	Offset   string       `json:"offset,omitempty"`
	Arch     string       `json:"arch,omitempty"`
	Frames   []cuda.Frame `json:"frames"`
	Error    string       `json:"error,omitempty"`
}

var gpuLinesCommand = &command{
	name:  "gpu-lines",
	args:  "[--json] [--arch ARCH] FILE ADDR...",
	short: "full inline chains of GPU addresses (KERNEL+0xOFF)",
	long: `Gpu-lines prints the full inline chain (function, file, line of every inlined
level) of GPU code addresses.

FILE is an NVIDIA cubin, fatbin or host binary with a fatbin, or an AMD code
object, offload bundle (plain or compressed) or host binary with a .hip_fatbin
section. ADDR is KERNEL+0xOFF (for cubins an offset in .text.KERNEL, as nvdisasm
prints it; for AMD an offset from the function symbol, as rocgdb prints it) or a
device address.`,
	examples: []string{
		"faultline gpu-lines kernels.sm_80.cubin crash_kernel+0xc0",
		"faultline gpu-lines --arch sm_90 --json ./app 'gather_rows<fl::Scale>+0x40'",
	},
	interspersed: true,
	new:          func() runner { return &gpuLinesRun{} },
}

// gpuLinesRun is one `faultline gpu-lines`.
type gpuLinesRun struct {
	json bool
	arch string
}

func (g *gpuLinesRun) flags(fs *flag.FlagSet) {
	fs.BoolVar(&g.json, "json", false, "print a JSON list, one entry per ADDR")
	fs.StringVar(&g.arch, "arch", "", "with a file holding code for several GPUs, use this one (sm_90, gfx90a)")
}

// run prints the full inline chain of each address.
func (g *gpuLinesRun) run(pos []string, stdout, stderr io.Writer) error {
	if len(pos) < 2 {
		return usageError{errors.New("want FILE ADDR... (FILE: cubin, AMD code object or a host binary holding them; ADDR: KERNEL+0xOFFSET or a device address)")}
	}
	images, problems, err := openGPUImages(pos[0])
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(stderr, "faultline gpu-lines: %s\n", p)
	}
	if g.arch != "" {
		var keep []gpuImage
		for _, im := range images {
			if im.Arch() == g.arch || amdgpu.Processor(im.Arch()) == g.arch {
				keep = append(keep, im)
			}
		}
		if len(keep) == 0 {
			return fmt.Errorf("%s holds no %s code", pos[0], g.arch)
		}
		images = keep
	}
	out := make([]gpuLine, 0, len(pos)-1)
	failed := 0
	for _, a := range pos[1:] {
		e := gpuLine{Address: a, Frames: []cuda.Frame{}}
		var firstErr error
		for _, im := range images {
			got, err := im.resolve(a)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			got.Address = a
			e, firstErr = got, nil
			break
		}
		if firstErr != nil {
			e.Error = firstErr.Error()
			failed++
		}
		out = append(out, e)
	}
	if g.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		printGPULines(stdout, out)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d addresses could not be resolved", failed, len(out))
	}
	return nil
}

func archNumber(a string) int {
	n := 0
	for _, c := range strings.TrimPrefix(a, "sm_") {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func printGPULines(w io.Writer, lines []gpuLine) {
	for i, l := range lines {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if l.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", l.Address, l.Error)
			continue
		}
		fmt.Fprintf(w, "%s in %s (%s %s, %s)\n", l.Address, l.Function, l.Section, l.Offset, l.Arch)
		if len(l.Frames) == 0 {
			fmt.Fprintln(w, "  no line information (build with -lineinfo for NVIDIA, -g for AMD)")
		}
		for k, f := range l.Frames {
			inl := ""
			if k < len(l.Frames)-1 {
				inl = " [inlined]"
			}
			fmt.Fprintf(w, "  #%d %s at %s:%d%s\n", k, f.Function, f.File, f.Line, inl)
		}
	}
}
