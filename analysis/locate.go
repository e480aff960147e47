package analysis

import "github.com/faultline-dev/faultline/analysis/classify"

// Locate symbolizes a code address of the crashed process: the inline
// chain at addr, innermost first (an instruction address, not a return
// address). It returns nil for a log (no process) or an address no module
// covers.
func (s *Session) Locate(addr uint64) []Frame {
	if s == nil || s.p == nil {
		return nil
	}
	return s.p.Locate(addr)
}

// IsRuntimeFrame reports whether f is runtime machinery rather than the
// program's own code: a frame in the C/C++ runtime or the loader, a
// runtime function linked into the program, or a signal frame (the frames
// editors de-emphasize).
func IsRuntimeFrame(f Frame) bool { return classify.IsRuntime(f) }
