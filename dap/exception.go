package dap

import (
	"strings"

	godap "github.com/google/go-dap"
)

// onExceptionInfo describes the crash: the classification's kind as the
// exception id, its summary, and the evidence and runtime message as
// details (the Exception widget VS Code shows over the culprit line).
func (s *Server) onExceptionInfo(r *godap.ExceptionInfoRequest) {
	c := s.model.crash
	body := godap.ExceptionInfoResponseBody{ExceptionId: "crash", BreakMode: "always"}
	if c.Signal != nil {
		body.ExceptionId = c.Signal.Name
	}
	desc, _ := stopDescription(c)
	body.Description = desc
	details := &godap.ExceptionDetails{TypeName: body.ExceptionId}
	if c.Signal != nil {
		details.FullTypeName = strings.TrimSpace(c.Signal.Name + " " + c.Signal.Code)
	}
	if cl := c.Classification; cl != nil {
		body.ExceptionId = cl.Kind
		body.Description = cl.Summary
		details.TypeName = cl.Kind
		var b strings.Builder
		if cl.Message != "" {
			b.WriteString(cl.Message + "\n")
		}
		if len(cl.Evidence) > 0 {
			b.WriteString("Evidence:\n")
			for _, e := range cl.Evidence {
				b.WriteString("- " + e + "\n")
			}
		}
		details.Message = strings.TrimSpace(b.String())
	}
	if g := c.GPU; g != nil && g.Exception != "" {
		details.Message = strings.TrimSpace(g.Exception + "\n" + details.Message)
	}
	details.StackTrace = s.model.stackText(s.model.stopped)
	body.Details = details
	s.send(&godap.ExceptionInfoResponse{Response: response(&r.Request), Body: body})
}

// stackText is a thread's backtrace as gdb prints it, for the exception
// details (at most 64 frames).
func (v *crashView) stackText(threadID int) string {
	t, _ := v.thread(threadID)
	if t == nil {
		return ""
	}
	var b strings.Builder
	for i, f := range t.frames {
		if i == 64 {
			b.WriteString("...\n")
			break
		}
		fn := f.Function
		if fn == "" {
			fn = "??"
		}
		b.WriteString("#" + itoa(i) + " " + fn)
		if f.File != "" {
			b.WriteString(" at " + f.File + ":" + itoa(f.Line))
		}
		b.WriteString("\n")
	}
	return b.String()
}
