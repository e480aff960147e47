package amdgpu

import (
	"testing"

	"github.com/faultline-dev/faultline/internal/boundtest"
	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// FuzzExtract feeds arbitrary bytes to the container walk (ELF host
// files, plain and compressed bundles) and opens what it finds, under the
// fuzzbudget oracle (a 16 KiB bundle stating 1 MiB is a seed).
func FuzzExtract(f *testing.F) {
	for _, rel := range []string{"bundles/scatter.hipfb", "bundles/scatter.ccob"} {
		f.Add(readTestdataF(f, rel))
	}
	f.Add([]byte(bundleMagic + "\x01\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("CCOB\x03\x00\x00\x00"))
	f.Add(boundtest.ZlibCCOB(1<<20, 16<<10))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			images, _, _ := Extract(data)
			for _, img := range images {
				if c, err := Open(img); err == nil {
					for _, fn := range c.Functions() {
						c.Lookup(fn.Addr)
					}
				}
			}
		})
	})
}

// FuzzParseBundle checks the header walk alone: entries must lie inside the data.
func FuzzParseBundle(f *testing.F) {
	f.Add(readTestdataF(f, "bundles/scatter.hipfb")[:512])
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbudget.Check(t, len(data), fuzzbudget.Default, func() {
			entries, end, _ := ParseBundle(data)
			if end > len(data) {
				t.Fatalf("end %d past %d bytes", end, len(data))
			}
			for _, e := range entries {
				if e.Offset+uint64(len(e.Data)) > uint64(len(data)) {
					t.Fatalf("entry %q outside the data", e.ID)
				}
			}
		})
	})
}

func readTestdataF(f *testing.F, rel string) []byte {
	f.Helper()
	data, err := readFile(rel)
	if err != nil {
		f.Fatal(err)
	}
	return data
}
