package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/faultline-dev/faultline/analysis/cuda"
)

func init() { commands["gpu-lines"] = cmdGPULines }

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

// cmdGPULines prints the full inline chain of cubin addresses:
//
//	faultline gpu-lines [--json] [--arch sm_XX] CUBIN|EXECUTABLE ADDR...
//
// ADDR is KERNEL+0xOFF (an offset in .text.KERNEL, as nvdisasm prints it)
// or a device address of a relocated image.
func cmdGPULines(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gpu-lines", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print a JSON list, one entry per ADDR")
	arch := fs.String("arch", "", "with an executable holding several cubins, use the one for this SM (sm_90)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usageError{errors.New("want CUBIN ADDR... (ADDR: KERNEL+0xOFFSET or a device address)")}
	}
	cubins, problems, err := cuda.OpenCubins(pos[0])
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(stderr, "faultline gpu-lines: %s\n", p)
	}
	if *arch != "" {
		var keep []*cuda.Cubin
		for _, c := range cubins {
			if c.Arch() == *arch {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			return fmt.Errorf("%s holds no %s cubin", pos[0], *arch)
		}
		cubins = keep
	}
	// Newest architecture first: the one a current GPU would run.
	for i := 1; i < len(cubins); i++ {
		for j := i; j > 0 && archNumber(cubins[j].Arch()) > archNumber(cubins[j-1].Arch()); j-- {
			cubins[j], cubins[j-1] = cubins[j-1], cubins[j]
		}
	}
	out := make([]gpuLine, 0, len(pos)-1)
	failed := 0
	for _, a := range pos[1:] {
		e := gpuLine{Address: a, Frames: []cuda.Frame{}}
		var firstErr error
		for _, c := range cubins {
			loc, err := c.Resolve(a)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			e.Function, e.Section, e.Arch = loc.Function, loc.Section, c.Arch()
			e.Offset = fmt.Sprintf("%#x", loc.Offset)
			if loc.Frames != nil {
				e.Frames = loc.Frames
			}
			firstErr = nil
			break
		}
		if firstErr != nil {
			e.Error = firstErr.Error()
			failed++
		}
		out = append(out, e)
	}
	if *asJSON {
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
			fmt.Fprintln(w, "  no line information (build with -lineinfo)")
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
