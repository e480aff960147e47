package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/analysis/report"
)

// gpuGoldenCases are GPU inputs whose markdown reports are kept as
// testdata/gpu_NAME.md: every GPU input kind gets a report of its own shape.
var gpuGoldenCases = map[string]string{
	"memcheck_scatter": "../logs/testdata/gpu/memcheck_scatter.txt",
	"memcheck":         "../logs/testdata/gpu/memcheck.txt",
	"cudagdb":          "../logs/testdata/gpu/cudagdb.txt",
	"torch":            "../logs/testdata/gpu/torch.txt",
	"nvcudmp":          "../../testdata/cuda/cores/illegal_address.sm_80.nvcudmp.gz",
	"rocm_memfault":    "../logs/testdata/gpu/rocm_memfault.txt",
	"rocm_aperture":    "../logs/testdata/gpu/rocm_aperture.txt",
	"rocm_xla":         "../logs/testdata/gpu/rocm_xla.txt",
	"rocm_torch":       "../logs/testdata/gpu/rocm_torch.txt",
	"rocm_debug_agent": "../logs/testdata/gpu/rocm_debug_agent.txt",
	"rocgdb":           "../logs/testdata/gpu/rocgdb.txt",
}

func TestGPUMarkdownGolden(t *testing.T) {
	for name, input := range gpuGoldenCases {
		t.Run(name, func(t *testing.T) {
			c, err := analysis.Open(input, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c.Dump.Path = filepath.Base(input)
			var buf bytes.Buffer
			if err := report.Markdown(&buf, c, ""); err != nil {
				t.Fatal(err)
			}
			md := buf.String()
			golden := filepath.Join("testdata", "gpu_"+name+".md")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if md != string(want) {
				t.Errorf("report differs from %s (go test -update rewrites it):\n%s", golden, firstDiff(md, string(want)))
			}
			checkGPUSections(t, md)
		})
	}
}

// checkGPUSections: a GPU report has the GPU shape and none of the
// native report's wording for cores without a faulting thread.
func checkGPUSections(t *testing.T, md string) {
	t.Helper()
	for _, s := range []string{"## GPU Crash Analysis:", "**GPU signal:**", "**Kernel:**", "**Faulting thread:**", "**Kind:** `gpu-",
		"**Signature:** `gpu: ", "### Device call chain", "### Host launch stack", "### Root cause hypothesis", "### Evidence",
		"### Recommended next steps"} {
		if !strings.Contains(md, s) {
			t.Errorf("GPU report lacks %q", s)
		}
	}
	for _, s := range []string{"gcore", "No crashing thread", "Not applicable: no thread faulted", "at pc  in", "**Crash signal:**"} {
		if strings.Contains(md, s) {
			t.Errorf("GPU report says %q", s)
		}
	}
}

// TestGPUReportOfTheIssueExample: the compute-sanitizer example of issue
// 17 names the access, the allocation it missed, block and thread, and
// groups by kernel.
func TestGPUReportOfTheIssueExample(t *testing.T) {
	c, err := analysis.Open(gpuGoldenCases["memcheck_scatter"], analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	report.Markdown(&buf, c, "")
	md := buf.String()
	for _, s := range []string{"block (17,0,0), thread (3,0,0)", "at address 0x7f3c00000010", "16 bytes after the nearest allocation (0x7f3c00000000, 0 bytes)",
		"a global write of 4 bytes", "`scatter_rows+0x70`", "| **#0** | `scatter_rows` (kernel) ← faulting access | scatter.cu:41 |",
		"`launch_scatter` ← culprit"} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
	if sig := c.Classification.Signature; !strings.HasPrefix(sig, "gpu: scatter_rows") || strings.Contains(sig, "??") {
		t.Errorf("signature %q", sig)
	}
}
