package logs

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
)

// maxGPULogBytes bounds the GPU crash logs ReadGPUCrash reads.
const maxGPULogBytes = 256 << 20

// GPULogFormat sniffs a text log (its first MiB is enough):
// "compute-sanitizer", "cuda-gdb", "pytorch-cuda" (a Python traceback
// ending in a CUDA error), or "".
func GPULogFormat(b []byte) string {
	switch {
	case bytes.Contains(b, []byte("========= ")) &&
		(bytes.Contains(b, []byte("COMPUTE-SANITIZER")) || bytes.Contains(b, []byte("CUDA-MEMCHECK")) ||
			bytes.Contains(b, []byte("ERROR SUMMARY"))):
		return "compute-sanitizer"
	case bytes.Contains(b, []byte("CUDA Exception:")) || bytes.Contains(b, []byte("CUDA_EXCEPTION_")) ||
		bytes.Contains(b, []byte("focus to CUDA kernel")) || bytes.Contains(b, []byte("focus set to CUDA kernel")):
		return "cuda-gdb"
	case bytes.Contains(b, []byte("Traceback (most recent call last):")) && bytes.Contains(b, []byte("CUDA error: ")):
		return "pytorch-cuda"
	case IsROCmLog(b):
		return "rocm"
	}
	return ""
}

// ReadGPUCrash reads a compute-sanitizer report, a cuda-gdb session or a
// PyTorch CUDA-error traceback into the crash model: the gpu section with
// what the log says (kernel, exception, block and thread, source line),
// the host stack as the crashing thread when the log has one, and notes.
// path names the log in the model and in errors.
func ReadGPUCrash(path string, r io.Reader) (*model.Crash, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxGPULogBytes))
	if err != nil {
		return nil, err
	}
	format := GPULogFormat(b)
	c := &model.Crash{Schema: model.Schema, Dump: model.Dump{Path: path, Format: format}, Threads: []model.Thread{}, Modules: []model.Module{},
		Problems: []model.Problem{}}
	g := &model.GPU{}
	c.GPU = g
	switch format {
	case "compute-sanitizer":
		rep, err := ParseSanitizer(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(rep.Errors) == 0 {
			return nil, fmt.Errorf("%s: compute-sanitizer reported no errors", path)
		}
		sanitizerGPU(c, rep)
	case "cuda-gdb":
		l, err := ParseCUDAGDB(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		cudaGDBGPU(g, l)
		g.Vendor, g.Source = "nvidia", "cuda-gdb"
	case "rocm":
		l, err := ParseROCm(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		FillROCm(c, l)
	case "pytorch-cuda":
		e, err := ParseTorchCUDAError(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		g.Exception = e.Error
		g.Vendor, g.Source = "nvidia", "pytorch"
		g.Notes = append(g.Notes, AsyncCaveat)
		t := model.Thread{ID: 1, Crashed: true, Name: "python"}
		for i, f := range e.Frames {
			t.Frames = append(t.Frames, model.Frame{Index: i, Function: f.Function, File: f.File, Line: f.Line,
				Trust: model.TrustContext})
		}
		c.Threads, c.CrashingThreadID = []model.Thread{t}, 1
	default:
		return nil, fmt.Errorf("%s is not a GPU crash log faultline can read", path)
	}
	return c, nil
}

func dim3(v [3]uint32) *model.Dim3 { return &model.Dim3{X: v[0], Y: v[1], Z: v[2]} }

// sanitizerGPU fills the model from the first error of a report; the
// others are listed as problems so none is lost.
func sanitizerGPU(c *model.Crash, rep *SanitizerReport) {
	e := rep.Errors[0]
	g := c.GPU
	g.Vendor, g.Source = "nvidia", "compute-sanitizer"
	g.Access, g.Allocation = SanitizerAccess(e)
	// Name the exception as cuda-gdb's classes do, keeping the
	// sanitizer's words.
	switch msg := strings.ToLower(e.Message); {
	case strings.Contains(msg, "misaligned"):
		g.Exception = "Misaligned Address: " + e.Message
	case strings.HasPrefix(msg, "invalid ") && e.Access != "":
		g.Exception = "Illegal Address: " + e.Message
	default:
		g.Exception = e.Message
	}
	g.Kernel = stripParams(e.Function)
	if n := len(e.DeviceFrames); n > 0 {
		g.Kernel = stripParams(e.DeviceFrames[n-1].Function) // the outermost device frame is the kernel
	}
	if e.HasThread {
		g.Block, g.Thread = dim3(e.Block), dim3(e.Thread)
	}
	if e.Address != 0 {
		g.Address = fmt.Sprintf("%#x", e.Address)
	}
	g.Notes = append(g.Notes, e.AddressNote...)
	if e.Offset != 0 || e.Function != "" {
		g.Offset = fmt.Sprintf("%s+%#x", stripParams(e.Function), e.Offset)
	}
	if e.File != "" {
		g.Frames = append(g.Frames, model.Frame{Function: stripParams(e.Function), File: e.File, Line: e.Line, Trust: model.TrustContext})
	}
	// Device frames after the first repeat it (newer releases list the
	// faulting function first).
	for _, f := range e.DeviceFrames {
		if len(g.Frames) > 0 && f.File == g.Frames[len(g.Frames)-1].File && f.Line == g.Frames[len(g.Frames)-1].Line {
			continue
		}
		g.Frames = append(g.Frames, model.Frame{Function: stripParams(f.Function), File: f.File, Line: f.Line, Trust: model.TrustContext})
	}
	for i := range g.Frames {
		g.Frames[i].Index = i
		g.Frames[i].Inlined = i < len(g.Frames)-1
	}
	if e.Race != nil {
		g.Notes = append(g.Notes, fmt.Sprintf("races with the %s access at %s+%#x (%s:%d)",
			strings.ToLower(e.Race.Access), e.Race.Function, e.Race.PC, e.Race.File, e.Race.Line))
	}
	if len(e.HostFrames) > 0 {
		t := model.Thread{ID: 1, Crashed: true, Name: "kernel launch (host)"}
		for i, f := range e.HostFrames {
			t.Frames = append(t.Frames, model.Frame{Index: i, PC: fmt.Sprintf("%#x", f.PC), Addr: f.PC, Module: f.Module,
				Function: f.Function, Trust: model.TrustScan})
		}
		c.Threads, c.CrashingThreadID = []model.Thread{t}, 1
	}
	for _, o := range rep.Errors[1:] {
		c.Problems = append(c.Problems, model.Problem{Message: fmt.Sprintf("compute-sanitizer also reported: %s at %s+%#x (%s:%d)",
			o.Message, o.Function, o.Offset, o.File, o.Line)})
	}
}

// cudaGDBGPU fills the model from a cuda-gdb log.
func cudaGDBGPU(g *model.GPU, l *CUDAGDBLog) {
	g.Exception = l.Exception
	if l.ErrorPC != 0 {
		g.ErrorPC = fmt.Sprintf("%#x", l.ErrorPC)
	}
	if f := l.Focus; f != nil {
		sm, warp, lane := f.SM, f.Warp, f.Lane
		g.SM, g.Warp, g.Lane = &sm, &warp, &lane
		g.Block, g.Thread = dim3(f.Block), dim3(f.Thread)
	}
	for i, f := range l.Frames {
		if f.Launch != "" {
			g.Kernel = f.Function
		}
		g.Frames = append(g.Frames, model.Frame{Index: i, Function: f.Function, File: f.File, Line: f.Line,
			Inlined: f.PC == 0 && i < len(l.Frames)-1, Trust: model.TrustContext})
		if f.InlinedFrom != "" {
			g.Notes = append(g.Notes, "cuda-gdb shows one inline level ("+f.InlinedFrom+"); open the GPU core dump or "+
				"run `faultline gpu-lines` on the cubin for the whole chain")
		}
	}
}

// stripParams drops a demangled name's parameter list, "k(float*)" → "k",
// and the return type compute-sanitizer prints before templates.
func stripParams(fn string) string {
	depth := 0
	for i, r := range fn {
		switch r {
		case '<':
			depth++
		case '>':
			depth--
		case '(':
			if depth == 0 && i > 0 && !strings.HasSuffix(fn[:i], "operator") && !strings.HasSuffix(fn[:i], "operator ") {
				fn = fn[:i]
				return strings.TrimPrefix(fn, "void ")
			}
		}
	}
	return strings.TrimPrefix(fn, "void ")
}
