package logs

import (
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzParseFaulthandler: any input parses or is rejected, without a panic,
// and what is kept stays within the caps.
func FuzzParseFaulthandler(f *testing.F) {
	f.Add("Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n  File \"a.py\", line 3 in f\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzbudget.Check(t, len(in), fuzzbudget.Default, func() {
			log, err := ParseFaulthandler(strings.NewReader(in))
			if err != nil {
				return
			}
			if len(log.Threads) == 0 || len(log.Threads) > maxPyThreads {
				t.Fatalf("%d threads", len(log.Threads))
			}
			for _, th := range log.Threads {
				if len(th.Frames) > maxPyFrames {
					t.Fatalf("%d frames", len(th.Frames))
				}
			}
		})
	})
}

// FuzzParseTracebacks: likewise for Python tracebacks.
func FuzzParseTracebacks(f *testing.F) {
	f.Add("Traceback (most recent call last):\n  File \"a.py\", line 3, in f\n    x()\nValueError: bad\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzbudget.Check(t, len(in), fuzzbudget.Default, func() {
			log, err := ParseTracebacks(strings.NewReader(in))
			if err != nil {
				return
			}
			if len(log.Tracebacks) == 0 || len(log.Tracebacks) > maxTracebacks || log.Final() == nil {
				t.Fatalf("%d tracebacks", len(log.Tracebacks))
			}
		})
	})
}
