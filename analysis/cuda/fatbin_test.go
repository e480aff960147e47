package cuda_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis/cuda"
)

// TestOpenCubinsFromHostObject reads the fatbin nvcc embedded in a host
// object (-gencode for sm_80 and sm_90).
func TestOpenCubinsFromHostObject(t *testing.T) {
	cubins, problems, err := cuda.OpenCubins(filepath.Join(testdataDir, "cubins", "kernels_host.o"))
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("problems: %q", problems)
	}
	var archs []string
	for _, c := range cubins {
		archs = append(archs, c.Arch())
		loc, err := c.Resolve("crash_kernel+0x10")
		if err != nil {
			t.Fatal(err)
		}
		if got := levels(loc.Frames); !strings.HasSuffix(got, "kernels.cu:16 <- kernels.cu:20") {
			t.Errorf("%s crash_kernel+0x10: %s", c.Arch(), got)
		}
	}
	if strings.Join(archs, " ") != "sm_80 sm_90" {
		t.Errorf("archs %v", archs)
	}
	if _, _, err := cuda.OpenCubins(filepath.Join(testdataDir, "src", "kernels.cu")); err == nil {
		t.Error("a source file yielded cubins")
	}
}
