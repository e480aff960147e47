package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline-dev/faultline/internal/testgz"
)

// TestDemo runs the README's first command as written, `go run . demo`,
// in the checkout, and the built binary's demo in its other formats.
func TestDemo(t *testing.T) {
	r := example(t, "go run . demo", invocation{dir: repoRoot, timeout: 5 * time.Minute})
	wantExit(t, r, 0)
	wantContains(t, "demo report", r.stdout, "SIGSEGV", "null-deref", "field_value", "record_timeout", "demo.c:57")

	r = faultline(t, invocation{}, "demo", "--format", "text")
	wantExit(t, r, 0)
	wantMatch(t, "demo text report", r.stdout, `in record_timeout at \S*demo\.c:60`, `in main at \S*demo\.c:68`)
	r = faultline(t, invocation{}, "demo", "--json")
	wantExit(t, r, 0)
	c := decodeCrash(t, r)
	if fr := c.crashed(); len(fr) < 3 || fr[0].Function != "field_value" || len(c.Problems) != 0 {
		t.Errorf("demo model: frames %+v problems %+v", fr, c.Problems)
	}
	r = faultline(t, invocation{}, "demo", "extra")
	wantExit(t, r, 2)
}

// TestVersionAndUsage runs `faultline version` and the top-level usage
// paths: no command, an unknown one, help.
func TestVersionAndUsage(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		r := faultline(t, invocation{}, arg)
		wantExit(t, r, 0)
		if !strings.HasPrefix(r.stdout, "faultline ") || strings.Count(r.stdout, "\n") != 1 {
			t.Errorf("faultline %s printed %q", arg, r.stdout)
		}
	}
	r := faultline(t, invocation{})
	wantExit(t, r, 2)
	wantContains(t, "usage without a command", r.stderr, "usage:", "faultline analyze")
	r = faultline(t, invocation{}, "nonsense")
	wantExit(t, r, 2)
	wantContains(t, "unknown command", r.stderr, `unknown command "nonsense"`)
	r = faultline(t, invocation{}, "--help")
	wantExit(t, r, 0)
	wantContains(t, "help", r.stdout, "faultline analyze", "faultline serve", "faultline hang")
	r = faultline(t, invocation{}, "analyze", "/nonexistent/core")
	wantExit(t, r, 1)
	wantContains(t, "missing dump", r.stderr, "/nonexistent/core")
}

// TestGPULines runs the README's gpu-lines examples on the checked-in sm_90
// cubin and on the host object that embeds it in its fatbin, and the GPU
// core dump example: the inline chain of crash_kernel+0x7d0 (nvdisasm -gi:
// fl::load_global<float> inlined into checksum).
func TestGPULines(t *testing.T) {
	dir := t.TempDir()
	cubins := filepath.Join(repoRoot, "testdata", "cuda", "cubins")
	copyFile(t, filepath.Join(cubins, "kernels.sm_90.cubin"), filepath.Join(dir, "kernels.cubin"), false)
	copyFile(t, filepath.Join(cubins, "kernels_host.o"), filepath.Join(dir, "app"), false)
	inv := invocation{dir: dir}

	r := example(t, "faultline gpu-lines kernels.cubin 'crash_kernel+0x7d0'", inv)
	wantExit(t, r, 0)
	wantMatch(t, "gpu-lines", r.stdout, `crash_kernel\+0x7d0 in checksum \(\.text\.crash_kernel 0x7d0, sm_90\)`,
		`#0 fl::load_global<float> at \S*access\.cuh:8 \[inlined\]`, `#1 checksum at \S*kernels\.cu:8`)

	r = example(t, "faultline gpu-lines --json app 'crash_kernel+0x7d0'", inv)
	wantExit(t, r, 0)
	var lines []struct {
		Address, Function, Arch string
		Frames                  []struct {
			Function, File string
			Line           int
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &lines); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if len(lines) != 1 || lines[0].Arch != "sm_90" || len(lines[0].Frames) != 2 ||
		lines[0].Frames[0].Function != "fl::load_global<float>" || lines[0].Frames[1].Function != "checksum" || lines[0].Frames[1].Line != 8 {
		t.Errorf("gpu-lines --json on the host object: %+v", lines)
	}
	r = faultline(t, inv, "gpu-lines", "kernels.cubin", "no_such_kernel+0x10")
	wantExit(t, r, 1)
	wantContains(t, "unknown kernel", r.stderr, "could not be resolved")

	testgz.Gunzip(t, filepath.Join(repoRoot, "testdata", "cuda", "cores", "illegal_address.sm_80.nvcudmp.gz"), filepath.Join(dir, "crash.nvcudmp"))
	r = example(t, "faultline analyze crash.nvcudmp", inv)
	wantExit(t, r, 0)
	wantContains(t, "GPU core report", r.stdout, "gpu-illegal-address", "Warp Illegal Address", "crash_kernel", "access.cuh:8")
	r = faultline(t, inv, "analyze", "--json", "crash.nvcudmp")
	wantExit(t, r, 0)
	var g struct {
		GPU struct {
			Kernel, Exception string
			Block, Thread     struct{ X, Y, Z int }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil {
		t.Fatal(err)
	}
	if g.GPU.Kernel != "crash_kernel" || g.GPU.Block.X != 2 || g.GPU.Thread.X != 101 {
		t.Errorf("GPU model: %+v", g.GPU)
	}
}

// TestGPULogREADME runs the README's GPU log and AMD examples as written,
// in the checkout (they name its test data): compute-sanitizer's
// out-of-bounds write, an AMD code object's inline chain in a host
// library's .hip_fatbin, and a rocgdb session stopped in a wave.
func TestGPULogREADME(t *testing.T) {
	inv := invocation{dir: repoRoot}
	r := example(t, "faultline analyze analysis/logs/testdata/gpu/memcheck_scatter.txt", inv)
	wantExit(t, r, 0)
	wantContains(t, "compute-sanitizer report", r.stdout, "## GPU Crash Analysis: analysis/logs/testdata/gpu/memcheck_scatter.txt",
		"**Kernel:** `scatter_rows`", "**Faulting thread:** block (17,0,0), thread (3,0,0)", "16 bytes after the nearest allocation")

	r = example(t, "faultline gpu-lines --arch gfx90a testdata/amdgpu/host/libkernels.so 'scatter_rows+0xdc'", inv)
	wantExit(t, r, 0)
	wantContains(t, "AMD inline chain", r.stdout, "scatter_rows+0xdc in scatter_rows (.text 0x19dc, gfx90a)\n",
		"  #0 element_at at src/access.h:7 [inlined]\n", "  #4 scatter_rows at src/scatter.hip:20\n")

	r = example(t, "faultline analyze analysis/logs/testdata/gpu/rocgdb.txt", inv)
	wantExit(t, r, 0)
	wantContains(t, "rocgdb report", r.stdout, "**Kernel:** `scatter_rows`",
		"work-group (17,0,0), work-item (3,0,0), wave 1:1:1:1, lane 3", "`gpu-illegal-address`")
}
