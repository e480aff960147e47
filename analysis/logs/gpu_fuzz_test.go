package logs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func addGPUSeeds(f *testing.F) {
	paths, _ := filepath.Glob("testdata/gpu/*.txt")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// The GPU log parsers must take any bytes without panicking or hanging.

func FuzzParseSanitizer(f *testing.F) {
	addGPUSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { ParseSanitizer(bytes.NewReader(b)) })
}

func FuzzParseCUDAGDB(f *testing.F) {
	addGPUSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { ParseCUDAGDB(bytes.NewReader(b)) })
}

func FuzzParseTorchCUDAError(f *testing.F) {
	addGPUSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { ParseTorchCUDAError(bytes.NewReader(b)) })
}

func FuzzParseNvdisasm(f *testing.F) {
	addGPUSeeds(f)
	f.Add([]byte("//------ .text.k ------\n\t//## File \"a.cu\", line 3 inlined at \"b.cu\", line 4\n\t//## File \"b.cu\", line 4\n        /*0010*/  MOV R1, R2 ;\n"))
	f.Fuzz(func(t *testing.T, b []byte) { ParseNvdisasm(bytes.NewReader(b)) })
}

func FuzzParseROCm(f *testing.F) {
	addGPUSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { ParseROCm(bytes.NewReader(b)) })
}
