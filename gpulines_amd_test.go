package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildFaultlineBinary builds the faultline binary into a test directory.
func buildFaultlineBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "faultline")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestGPULinesAMDSubprocess runs the built binary on AMD inputs: a code
// object inside the host library's .hip_fatbin, a compressed bundle with
// --arch, the 5-level chain at the bottom of scatter_rows, and the errors.
func TestGPULinesAMDSubprocess(t *testing.T) {
	bin := buildFaultlineBinary(t)
	runBin := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	// The store at the bottom of the chain (llvm-symbolizer on the same
	// object gives these five levels; analysis/amdgpu's oracle test
	// compares every address).
	addr := findStoreAddress(t, "testdata/amdgpu/host/libkernels.so", "gfx90a")
	out, errs, code := runBin("gpu-lines", "--json", "--arch", "gfx90a", "testdata/amdgpu/host/libkernels.so", addr, "nosuch+0x4")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (one address fails): %s", code, errs)
	}
	var got []gpuLine
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got) != 2 || got[0].Arch != "gfx90a" || got[0].Function != "scatter_rows" || got[1].Error == "" {
		t.Fatalf("%+v", got)
	}
	var chain []string
	for _, f := range got[0].Frames {
		chain = append(chain, f.Function+"@"+filepath.Base(f.File))
	}
	want := "element_at@access.h store_element@access.h scatter::combine_row<scatter::AddOp>@update.h scatter::apply_update@update.h scatter_rows@scatter.hip"
	if strings.Join(chain, " ") != want {
		t.Errorf("chain %q, want %q", strings.Join(chain, " "), want)
	}

	out, errs, code = runBin("gpu-lines", "--arch", "gfx942", "testdata/amdgpu/bundles/scatter.ccob",
		findStoreAddress(t, "testdata/amdgpu/bundles/scatter.ccob", "gfx942"))
	if code != 0 || !strings.Contains(out, "gfx942") || !strings.Contains(out, "#4 scatter_rows at src/scatter.hip:20") {
		t.Errorf("compressed bundle: exit %d\n%s%s", code, out, errs)
	}
	_, errs, code = runBin("gpu-lines", "--arch", "gfx90a", "testdata/amdgpu/bundles/scatter.ccob", addr)
	if code != 1 || !strings.Contains(errs, "holds no gfx90a code") {
		t.Errorf("wrong --arch: exit %d: %s", code, errs)
	}
	_, errs, code = runBin("gpu-lines", "README.md", "x+0x4")
	if code != 1 || !strings.Contains(errs, "not an AMD GPU code object") {
		t.Errorf("not GPU code: exit %d: %s", code, errs)
	}
}

// findStoreAddress is the first address in scatter_rows of the arch's
// code object in file whose chain has five levels (starts at element_at).
func findStoreAddress(t *testing.T, file, arch string) string {
	for off := 0; off < 0x400; off += 4 {
		a := fmt.Sprintf("scatter_rows+%#x", off)
		var out, errb bytes.Buffer
		if run([]string{"gpu-lines", "--json", "--arch", arch, file, a}, &out, &errb) != 0 {
			continue
		}
		var got []gpuLine
		if json.Unmarshal(out.Bytes(), &got) == nil && len(got) == 1 && len(got[0].Frames) == 5 {
			return a
		}
	}
	t.Fatalf("%s %s: no 5-level chain in scatter_rows", file, arch)
	return ""
}

// TestAnalyzeGPULogsSubprocess runs `faultline analyze` on the issue's
// compute-sanitizer example and on a rocgdb session: each prints the GPU
// report shape, never the native report's "gcore" wording.
func TestAnalyzeGPULogsSubprocess(t *testing.T) {
	bin := buildFaultlineBinary(t)
	for log, want := range map[string][]string{
		"analysis/logs/testdata/gpu/memcheck_scatter.txt": {"## GPU Crash Analysis:", "block (17,0,0), thread (3,0,0)",
			"16 bytes after the nearest allocation", "**Signature:** `gpu: scatter_rows"},
		"analysis/logs/testdata/gpu/rocgdb.txt": {"**Read from:** AMD rocgdb", "work-group (17,0,0), work-item (3,0,0), wave 1:1:1:1, lane 3",
			"| **#0** | `element_at` (inlined) ← faulting access | src/access.h:7 |", "AMD_SERIALIZE_KERNEL=3"},
	} {
		cmd := exec.Command(bin, "analyze", log)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", log, err, errb.String())
		}
		for _, s := range want {
			if !strings.Contains(out.String(), s) {
				t.Errorf("%s: report lacks %q:\n%s", log, s, out.String())
			}
		}
		for _, s := range []string{"gcore", "No crashing thread", "at pc  in"} {
			if strings.Contains(out.String(), s) {
				t.Errorf("%s: report says %q", log, s)
			}
		}
	}
	out, err := exec.Command(bin, "analyze", "--format", "text", "analysis/logs/testdata/gpu/rocgdb.txt").Output()
	if err != nil || !strings.Contains(string(out), "device #0 element_at at src/access.h:7 [inlined]") ||
		!strings.Contains(string(out), "gpu:       memory violation (SIGSEGV)") {
		t.Errorf("--format text: %v\n%s", err, out)
	}
}
