package analysis_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
)

// TestOpenROCmLogs: every ROCm log shape becomes an AMD GPU crash with its
// kind, kernel, address and reason where the log has them.
func TestOpenROCmLogs(t *testing.T) {
	const dir = "logs/testdata/gpu/"
	cases := []struct {
		file, source, kernel, address, reason string
		frames                                int
	}{
		{"rocm_memfault.txt", "rocm", "", "0x7f2e3c400000", "Page not present or supervisor privilege", 0},
		{"rocm_aperture.txt", "rocm", "", "", "The agent attempted to access memory beyond the largest legal address.", 0},
		{"rocm_xla.txt", "jax-xla", "loop_scatter_fusion", "", "", 0},
		{"rocm_torch.txt", "pytorch", "", "", "an illegal memory access was encountered", 0},
		{"rocgdb.txt", "rocgdb", "scatter_rows", "", "", 5},
	}
	for _, tc := range cases {
		c, err := analysis.Open(dir+tc.file, analysis.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		g := c.GPU
		if c.Dump.Format != "rocm" || g == nil || g.Vendor != "amd" || g.Source != tc.source || g.Kernel != tc.kernel ||
			g.Address != tc.address || g.Reason != tc.reason || len(g.Frames) != tc.frames {
			t.Errorf("%s: format %q gpu %+v", tc.file, c.Dump.Format, g)
			continue
		}
		if c.Classification.Kind != "gpu-illegal-address" {
			t.Errorf("%s: kind %q", tc.file, c.Classification.Kind)
		}
	}
}

// TestROCmDebugAgentChain: the debug agent's pc and code object URI
// resolve to the full inline chain when the file it names is here (the
// URI's offset and size select the gfx90a object of scatter.hip inside
// the host library's .hip_fatbin).
func TestROCmDebugAgentChain(t *testing.T) {
	lib, err := filepath.Abs("../testdata/amdgpu/host/libkernels.so")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("logs/testdata/gpu/rocm_debug_agent.txt")
	if err != nil {
		t.Fatal(err)
	}
	log := strings.ReplaceAll(string(b), "file:///work/app/libkernels.so", "file://"+lib)
	path := filepath.Join(t.TempDir(), "job.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := analysis.Open(path, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := c.GPU
	var chain []string
	for _, f := range g.Frames {
		chain = append(chain, f.Function+"@"+filepath.Base(f.File))
	}
	want := "element_at@access.h store_element@access.h scatter::combine_row<scatter::AddOp>@update.h scatter::apply_update@update.h scatter_rows@scatter.hip"
	if strings.Join(chain, " ") != want || g.Offset != "0x19dc" || g.Source != "rocm-debug-agent" || g.Arch != "gfx90a" {
		t.Errorf("chain %q offset %s source %s (problems %+v)", strings.Join(chain, " "), g.Offset, g.Source, c.Problems)
	}
	if sig := c.Classification.Signature; sig != "gpu: scatter_rows | element_at | store_element | scatter::combine_row<scatter::AddOp>" {
		t.Errorf("signature %q", sig)
	}
}
