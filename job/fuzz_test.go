package job

import (
	"bytes"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzDecode: any bytes either fail to decode with an error, or decode to a
// summary that merges, reports and re-encodes within the size cap, under
// the fuzzbudget resource oracle.
// Seeds: testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			s, err := Decode(data)
			if err != nil {
				return
			}
			rep := Merge([]Loaded{{File: "fuzz.json", Summary: s}}, nil)
			var out bytes.Buffer
			if err := rep.Markdown(&out); err != nil {
				t.Fatal(err)
			}
			out.Reset()
			if err := rep.JSON(&out); err != nil {
				t.Fatal(err)
			}
			out.Reset()
			if err := Write(&out, s); err != nil {
				t.Fatal(err)
			}
			if out.Len() > maxSummaryBytes+1 && len(s.Stacks) > 1 {
				t.Errorf("re-encoded summary is %d bytes", out.Len())
			}
		})
	})
}
