package classify

import "github.com/faultline-dev/faultline/analysis/model"

// IsRuntime reports whether f is runtime machinery: a frame in a C/C++
// runtime module or the loader, a runtime function linked into the
// program, or a signal frame. Culprit selection skips such frames.
func IsRuntime(f model.Frame) bool { return isRuntime(f) }
