package logs

import (
	"bytes"
	"errors"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzParseGDB feeds ParseGDB arbitrary text. The seeds under
// testdata/fuzz/FuzzParseGDB are excerpts of the real gdb output in
// testdata/native/cores plus malformed variants.
func FuzzParseGDB(f *testing.F) {
	f.Add([]byte("Program terminated with signal SIGSEGV, Segmentation fault.\n#0  0x0000000000401136 in ?? ()\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			log, err := ParseGDB(bytes.NewReader(data))
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("error of type %T: %v", err, err)
				}
				if errors.Is(err, ErrNotGDBLog) && log != nil {
					t.Fatal("ErrNotGDBLog with a log")
				}
				return
			}
			if log == nil {
				t.Fatal("nil log without error")
			}
			nums := map[int]bool{}
			for _, th := range log.Threads {
				if nums[th.Num] {
					t.Fatalf("thread %d listed twice", th.Num)
				}
				nums[th.Num] = true
				for i, fr := range th.Frames {
					if i > 0 && fr.Index <= th.Frames[i-1].Index {
						t.Fatalf("thread %d: frame indexes %d then %d", th.Num, th.Frames[i-1].Index, fr.Index)
					}
				}
			}
		})
	})
}
