package logs

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// TorchCUDAError is a Python traceback ending in a CUDA error, as PyTorch
// raises it: "RuntimeError: CUDA error: an illegal memory access was
// encountered" (torch.AcceleratorError in newer releases), followed by the
// hint that kernel errors are reported asynchronously.
type TorchCUDAError struct {
	// ExceptionType is "RuntimeError", "torch.AcceleratorError", ...
	ExceptionType string
	// Error is the CUDA error text, "an illegal memory access was encountered".
	Error string
	// Message is the whole exception line after the type.
	Message string
	// Frames is the Python traceback, innermost first.
	Frames []PythonFrame
	// Async says PyTorch added its "might be asynchronously reported"
	// hint; LaunchBlocking says the log was produced with
	// CUDA_LAUNCH_BLOCKING=1 in effect (PyTorch's hint then differs).
	Async bool
	// DeviceAssert holds "Assertion `...` failed." lines printed by kernels
	// (device-side asserts), with their kernel, block and thread.
	DeviceAsserts []string
	LogLine       int
}

// PythonFrame is one `File "x.py", line N, in f` entry with its code line.
type PythonFrame struct {
	File     string
	Line     int
	Function string
	Code     string
}

var (
	rePyFrame   = lazyregexp.New(`^\s*File "(.+)", line (\d+), in (.+)$`)
	reTorchCUDA = lazyregexp.New(`^([\w.]+(?:Error|Exception)): (?:CUDA error: |CUDA driver error: )(.+?)\s*$`)
	reDevAssert = lazyregexp.New(`Assertion .* failed\.`)
)

// ParseTorchCUDAError reads a log holding a Python traceback that ends in
// a CUDA error. The last such traceback wins.
func ParseTorchCUDAError(r io.Reader) (*TorchCUDAError, error) {
	lr := newLineReader(r, maxLineLen)
	var res *TorchCUDAError
	var frames []PythonFrame
	var asserts []string
	inTB := false
	for {
		raw, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		line := cleanLine(raw)
		switch {
		case strings.HasPrefix(line, "Traceback (most recent call last):"):
			frames, inTB = nil, true
		case inTB && rePyFrame.MatchString(line):
			m := rePyFrame.FindStringSubmatch(line)
			n, _ := strconv.Atoi(m[2])
			if len(frames) < maxFrames {
				frames = append(frames, PythonFrame{File: m[1], Line: n, Function: m[3]})
			}
		case inTB && strings.HasPrefix(line, "    ") && len(frames) > 0 && frames[len(frames)-1].Code == "":
			frames[len(frames)-1].Code = strings.TrimSpace(line)
		case reTorchCUDA.MatchString(line):
			m := reTorchCUDA.FindStringSubmatch(line)
			res = &TorchCUDAError{ExceptionType: m[1], Error: m[2], Message: strings.TrimPrefix(line, m[1]+": "),
				LogLine: lr.num, DeviceAsserts: asserts}
			for i := len(frames) - 1; i >= 0; i-- {
				res.Frames = append(res.Frames, frames[i])
			}
			inTB = false
		case res != nil && strings.Contains(line, "asynchronously reported"):
			res.Async = true
		case reDevAssert.MatchString(line) && len(asserts) < 64:
			asserts = append(asserts, strings.TrimSpace(line))
		case inTB && line != "" && !strings.HasPrefix(line, " "):
			// The exception line of some other error ends this traceback.
			inTB = false
		}
	}
	if res == nil {
		return nil, errors.New("no Python exception with a CUDA error found")
	}
	return res, nil
}

// AsyncCaveat explains why the traceback of a CUDA error may not name the
// faulting kernel, and how to find the one that did.
const AsyncCaveat = "CUDA reports kernel faults asynchronously: the error surfaces at the next call " +
	"that synchronizes with the GPU, so the Python line (and any kernel name in the message) may belong to a " +
	"later launch than the faulting one. To confirm: rerun with CUDA_LAUNCH_BLOCKING=1 (every launch then " +
	"waits, and the traceback stops at the faulting launch), or enable GPU core dumps " +
	"(CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1, kernels built with -lineinfo) and open the .nvcudmp with faultline, " +
	"which names the faulting kernel, block, thread and source line."
