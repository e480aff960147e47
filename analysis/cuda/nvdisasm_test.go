package cuda_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/cuda"
	"github.com/faultline-dev/faultline/analysis/logs"
	"github.com/faultline-dev/faultline/internal/testgz"
)

// testdataDir holds the checked-in cubins and the reference outputs that
// testdata/cuda/build.sh made with CUDA 11.8's nvdisasm and eu-readelf.
const testdataDir = "../../testdata/cuda"

func referenceCubins(t testing.TB) []string {
	t.Helper()
	cubins, err := filepath.Glob(filepath.Join(testdataDir, "cubins", "*.cubin"))
	if err != nil || len(cubins) == 0 {
		t.Fatalf("no reference cubins in %s/cubins (run testdata/cuda/build.sh): %v", testdataDir, err)
	}
	return cubins
}

func readNvdisasm(t testing.TB, cubin string) *logs.NvdisasmListing {
	t.Helper()
	base := strings.TrimSuffix(filepath.Base(cubin), ".cubin")
	l, err := logs.ParseNvdisasm(testgz.Open(t, filepath.Join(testdataDir, "ref", base+".nvdisasm.txt.gz")))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func levels(fs []cuda.Frame) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString(" <- ")
		}
		fmt.Fprintf(&b, "%s:%d", filepath.Base(f.File), f.Line)
	}
	return b.String()
}

func refLevels(ls []logs.SourceLevel) string {
	var b strings.Builder
	for i, l := range ls {
		if i > 0 {
			b.WriteString(" <- ")
		}
		fmt.Fprintf(&b, "%s:%d", filepath.Base(l.File), l.Line)
	}
	return b.String()
}

// knownNvdisasmErrors are the annotated addresses where nvdisasm 11.8's
// chain is wrong. ptxas 11.8 for sm_90 writes a row twice at some function
// entries ("advance line by 0; copy") and numbers the NVIDIA call-site
// contexts as if the duplicate were one row; nvdisasm counts it, so every
// context after it lands one row early. faultline counts identical
// consecutive rows once. The source decides: at crash_kernel+0x7d0 the
// load_global call is on kernels.cu:8 (`s += fl::load_global(p, k);`),
// which faultline gives, not on line 7 (the for statement), which nvdisasm
// gives; TestCallSitesNameTheirCallee checks every call site this way.
var knownNvdisasmErrors = map[string]string{
	"kernels.sm_90.cubin .text.crash_kernel+0x7d0":         "duplicate row at 0x290 (checksum entry)",
	"rdc_b.sm_90.cubin .text._Z7combinePKfPKilf+0x60":      "duplicate row at 0x0 (combine entry)",
	"rdc_linked.sm_90.cubin .text._Z7combinePKfPKilf+0x60": "duplicate row at 0x0 (combine entry)",
}

// TestChainsMatchNvdisasm resolves every instruction address of every
// reference cubin and compares the chain with nvdisasm -gi's annotation:
// the whole chain where nvdisasm printed a block, the innermost level
// elsewhere (nvdisasm prints a block only when the innermost line changes).
func TestChainsMatchNvdisasm(t *testing.T) {
	for _, path := range referenceCubins(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			c, err := cuda.OpenCubin(path)
			if err != nil {
				t.Fatal(err)
			}
			ref := readNvdisasm(t, path)
			checked, full := 0, 0
			for _, sec := range ref.Sections {
				for _, in := range sec.Instructions {
					loc, err := c.Resolve(fmt.Sprintf("%s+%#x", sec.Name, in.Address))
					if err != nil {
						t.Fatalf("%s+%#x: %v", sec.Name, in.Address, err)
					}
					want := refLevels(in.Chain)
					got := levels(loc.Frames)
					if !in.Annotated && len(in.Chain) > 0 && len(loc.Frames) > 0 {
						want = refLevels(in.Chain[:1])
						got = levels(loc.Frames[:1])
					}
					key := fmt.Sprintf("%s %s+%#x", filepath.Base(path), sec.Name, in.Address)
					if why, known := knownNvdisasmErrors[key]; known {
						if got == want {
							t.Errorf("%s: listed as an nvdisasm error (%s) but now agrees", key, why)
						}
						continue
					}
					if got != want {
						t.Errorf("%s+%#x (listing line %d, annotated %v):\n got  %s\n want %s", sec.Name, in.Address, in.LogLine, in.Annotated, got, want)
					}
					checked++
					if in.Annotated {
						full++
					}
				}
			}
			if checked == 0 {
				t.Fatal("no instructions in the nvdisasm reference")
			}
			t.Logf("%d instructions, %d with a full nvdisasm chain", checked, full)
		})
	}
}
