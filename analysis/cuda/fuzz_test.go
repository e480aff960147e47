package cuda

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/internal/fuzzbudget"
)

// Seeds: the real cubins and their .debug_line sections (added here), and
// testdata/fuzz/FuzzXxx (a synthetic GPU core dump, inputs the fuzzer found
// interesting).

func addFileSeeds(f *testing.F, glob string) {
	paths, _ := filepath.Glob(glob)
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && len(b) < 1<<20 {
			f.Add(b)
		}
	}
}

// FuzzParseCubin parses arbitrary bytes as a cubin and resolves every
// function's first and last instruction: no panic, no hang.
func FuzzParseCubin(f *testing.F) {
	addFileSeeds(f, "../../testdata/cuda/cubins/rdc_*.cubin")
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			c, err := ParseCubin(b)
			if err != nil {
				return
			}
			for _, fn := range c.Functions() {
				c.Resolve(fmt.Sprintf("%s+%#x", fn.Section, fn.Offset))
				if fn.Size > 0 {
					c.Resolve(fmt.Sprintf("%s+%#x", fn.Section, fn.Offset+fn.Size-1))
				}
				c.LookupAddress(fn.Addr)
			}
		})
	})
}

// FuzzLineProgram runs arbitrary .debug_line bytes, with NVIDIA's vendor
// opcodes, and reconstructs chains from every row.
func FuzzLineProgram(f *testing.F) {
	for _, p := range []string{"kernels.sm_80.cubin", "rdc_linked.sm_90.cubin"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/cuda/cubins", p))
		if err != nil {
			continue
		}
		if ef, err := parseELF(b); err == nil {
			if s := ef.section(".debug_line"); s != nil {
				d, _ := ef.sectionData(s)
				f.Add(d)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			tables, _ := parseLineTables(b)
			c := &Cubin{debugStr: []byte("_Z1fv\x00_Z1gv\x00"), lines: map[int][]*placedSeq{}}
			c.repairNameBases(tables)
			for _, tab := range tables {
				for si := range tab.sequences {
					s := &tab.sequences[si]
					ps := &placedSeq{table: tab, rows: s.rows, start: s.start, end: s.end}
					c.lines[1] = []*placedSeq{ps}
					for _, r := range s.rows {
						c.chain(1, r.addr, "k", "k")
					}
				}
			}
		})
	})
}

// FuzzParseCoreDump parses arbitrary bytes as a GPU core dump and reads it
// into the crash model (threads, stand-ins, registers, symbolized frames)
// under the fuzz budget: no panic, no hang, no amplification.
func FuzzParseCoreDump(f *testing.F) {
	// testdata/fuzz/FuzzParseCoreDump holds a synthetic dump (TestWriteFuzzSeedCore).
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbudget.Check(t, len(b), fuzzbudget.Default, func() {
			ReadCrash("fuzz.nvcudmp", bytes.NewReader(b))
		})
	})
}
