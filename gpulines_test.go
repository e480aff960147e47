package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestGPULinesJSON checks the gpu-lines contract: one entry per ADDR in
// order, frames innermost first, and a per-address error that fails the
// command without hiding the other entries.
func TestGPULinesJSON(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"gpu-lines", "--json", "testdata/cuda/cubins/kernels.sm_80.cubin",
		"crash_kernel+0xc0", "spin_kernel+0x50", "nokernel+0x0"}, &out, &errb)
	if code != 1 {
		t.Errorf("exit %d, want 1 (one address fails): %s", code, errb.String())
	}
	var got []struct {
		Address  string `json:"address"`
		Function string `json:"function"`
		Frames   []struct {
			Function string `json:"function"`
			File     string `json:"file"`
			Line     int    `json:"line"`
		} `json:"frames"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(got) != 3 || got[0].Address != "crash_kernel+0xc0" || got[1].Address != "spin_kernel+0x50" || got[2].Error == "" {
		t.Fatalf("%+v", got)
	}
	if f := got[0].Frames; len(f) != 5 || f[0].Function != "fl::load_global<int>" || f[0].Line != 8 ||
		f[4].Function != "crash_kernel" || f[4].Line != 20 || !strings.HasSuffix(f[4].File, "kernels.cu") {
		t.Errorf("crash_kernel+0xc0: %+v", f)
	}
	if f := got[1].Frames; len(f) != 2 || f[0].Function != "keep_waiting" || f[0].Line != 35 || f[1].Line != 40 {
		t.Errorf("spin_kernel+0x50: %+v", f)
	}
}
