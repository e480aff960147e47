package e2e

import "testing"

// TestGPUExamples runs the README's GPU examples that read the checked-in
// data from the repository root: the compute-sanitizer report of the
// issue's out-of-bounds write, an AMD code object in a host library's
// .hip_fatbin, and a rocgdb session.
func TestGPUExamples(t *testing.T) {
	inv := invocation{dir: repoRoot}
	r := example(t, "faultline analyze analysis/logs/testdata/gpu/memcheck_scatter.txt", inv)
	wantExit(t, r, 0)
	wantContains(t, "compute-sanitizer report", r.stdout, "## GPU Crash Analysis:", "block (17,0,0), thread (3,0,0)",
		"16 bytes after the nearest allocation (0x7f3c00000000, 0 bytes)", "**Signature:** `gpu: scatter_rows | Illegal Address`")

	r = example(t, "faultline gpu-lines --arch gfx90a testdata/amdgpu/host/libkernels.so 'scatter_rows+0xdc'", inv)
	wantExit(t, r, 0)
	wantContains(t, "AMD gpu-lines", r.stdout, "scatter_rows+0xdc in scatter_rows (.text 0x19dc, gfx90a)",
		"#0 element_at at src/access.h:7 [inlined]", "#4 scatter_rows at src/scatter.hip:20")

	r = example(t, "faultline analyze analysis/logs/testdata/gpu/rocgdb.txt", inv)
	wantExit(t, r, 0)
	wantContains(t, "rocgdb report", r.stdout, "**Read from:** AMD rocgdb", "wave 1:1:1:1, lane 3", "AMD_SERIALIZE_KERNEL=3")
}
