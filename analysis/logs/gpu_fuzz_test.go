package logs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis/model"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

func addGPUSeeds(f *testing.F) {
	paths, _ := filepath.Glob("testdata/gpu/*.txt")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// The GPU log parsers must take any bytes without panicking or hanging,
// within the fuzzbudget resource oracle.

func budgeted(t *testing.T, b []byte, parse func()) {
	fuzzbudget.Check(t, len(b), fuzzbudget.Default, parse)
}

func FuzzParseSanitizer(f *testing.F) {
	addGPUSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { budgeted(t, b, func() { ParseSanitizer(bytes.NewReader(b)) }) })
}

func FuzzParseCUDAGDB(f *testing.F) {
	addGPUSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { budgeted(t, b, func() { ParseCUDAGDB(bytes.NewReader(b)) }) })
}

func FuzzParseTorchCUDAError(f *testing.F) {
	addGPUSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { budgeted(t, b, func() { ParseTorchCUDAError(bytes.NewReader(b)) }) })
}

func FuzzParseNvdisasm(f *testing.F) {
	addGPUSeeds(f)
	f.Add([]byte("//------ .text.k ------\n\t//## File \"a.cu\", line 3 inlined at \"b.cu\", line 4\n\t//## File \"b.cu\", line 4\n        /*0010*/  MOV R1, R2 ;\n"))
	f.Fuzz(func(t *testing.T, b []byte) { budgeted(t, b, func() { ParseNvdisasm(bytes.NewReader(b)) }) })
}

// FuzzParseROCm reads the log and fills a crash model from it, which
// opens the code object file a "code object: file://..." line names.
func FuzzParseROCm(f *testing.F) {
	addGPUSeeds(f)
	f.Add([]byte("pc: 0x1010\n    code object: file:///dev/zero#offset=0&size=1073741824\n    loaded at: [0x1000-0x2000]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		budgeted(t, b, func() {
			if l, err := ParseROCm(bytes.NewReader(b)); err == nil && l != nil {
				FillROCm(&model.Crash{}, l)
			}
		})
	})
}
