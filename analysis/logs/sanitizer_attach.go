package logs

import (
	"fmt"
	"io"
	"strings"

	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/analysis/regular"
)

// maxSanitizerLog caps how much of a sanitizer log is read.
const maxSanitizerLog = 64 << 20

// AttachSanitizerLog reads the sanitizer report in the log at path into
// c.Sanitizer, for classification; what does not fit (no report, another
// process's) becomes a problem.
func AttachSanitizerLog(c *model.Crash, path string) {
	f, _, err := regular.Open(path)
	if err != nil {
		c.Problems = append(c.Problems, model.Problem{Message: fmt.Sprintf("cannot read the sanitizer log: %v", err)})
		return
	}
	defer f.Close()
	rep, err := ParseASan(io.LimitReader(f, maxSanitizerLog))
	if err != nil {
		c.Problems = append(c.Problems, model.Problem{Message: fmt.Sprintf("%s: %v", path, err)})
		return
	}
	if rep.PID != 0 && c.Dump.PID != 0 && rep.PID != c.Dump.PID {
		c.Problems = append(c.Problems, model.Problem{Message: fmt.Sprintf(
			"%s is %s's report for pid %d, the core is of pid %d: not used", path, rep.Tool, rep.PID, c.Dump.PID)})
		return
	}
	s := &model.SanitizerReport{Tool: rep.Tool, Bug: rep.Bug, Access: rep.Access, Size: rep.Size, Log: path,
		AllocatedAt: firstSourceFrame(rep.AllocatedBy), FreedAt: firstSourceFrame(rep.FreedBy)}
	if rep.Address != 0 {
		s.Address = fmt.Sprintf("%#x", rep.Address)
	}
	c.Sanitizer = s
}

// firstSourceFrame names the first frame with a source line (the
// program's, past the runtime's interceptors): "main (asan.c:22)".
func firstSourceFrame(frames []ASanFrame) string {
	for _, f := range frames {
		if f.File != "" && f.Line > 0 && !sanitizerRuntimeFrame(f) {
			return fmt.Sprintf("%s (%s:%d)", f.Function, baseOf(f.File), f.Line)
		}
	}
	return ""
}

func baseOf(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// sanitizerRuntimeFrame reports a frame of the sanitizer runtime itself:
// gcc's libasan has line information, so its interceptors
// (__interceptor_malloc at asan_malloc_linux.cpp:69) come with a source.
func sanitizerRuntimeFrame(f ASanFrame) bool {
	return strings.HasPrefix(f.Function, "__interceptor_") || strings.HasPrefix(f.Function, "___interceptor_") ||
		strings.Contains(f.File, "/libsanitizer/") || strings.Contains(f.File, "/compiler-rt/")
}
