package logs

import (
	"os"
	"strings"
	"testing"
)

func parseROCmFile(t *testing.T, name string) *ROCmLog {
	t.Helper()
	f, err := os.Open("testdata/gpu/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := ParseROCm(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return l
}

func TestParseROCmMemoryFault(t *testing.T) {
	l := parseROCmFile(t, "rocm_memfault.txt")
	if !l.HasNode || l.Node != 2 || l.Agent != 0x55d0c0a8f2d0 || !l.HasAddress || l.Address != 0x7f2e3c400000 ||
		l.Reason != "Page not present or supervisor privilege" {
		t.Errorf("%+v", l)
	}
}

func TestParseROCmQueueAbort(t *testing.T) {
	l := parseROCmFile(t, "rocm_aperture.txt")
	if l.HSAStatus != "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION" || l.Queue != 0x7f5a20600000 ||
		l.HSAMessage != "The agent attempted to access memory beyond the largest legal address." {
		t.Errorf("%+v", l)
	}
}

func TestParseROCmXLAAndTorch(t *testing.T) {
	x := parseROCmFile(t, "rocm_xla.txt")
	if x.HIPError != "hipErrorIllegalAddress" || x.Kernel != "loop_scatter_fusion" ||
		!strings.HasPrefix(x.Runtime, "INTERNAL: Failed to launch ROCm kernel") || len(x.PyFrames) != 2 {
		t.Errorf("xla: %+v", x)
	}
	p := parseROCmFile(t, "rocm_torch.txt")
	if p.HIPError != "hipErrorIllegalAddress" || p.HIPMessage != "an illegal memory access was encountered" ||
		len(p.PyFrames) != 3 || p.PyFrames[2].Function != "forward" || p.PyFrames[2].Line != 17 {
		t.Errorf("torch: %+v", p)
	}
}

func TestParseROCmDebugAgent(t *testing.T) {
	l := parseROCmFile(t, "rocm_debug_agent.txt")
	if l.WaveReason != "MEMORY_VIOLATION" || l.PC != 0x7f2b9d4019dc || l.Kernel != "scatter_rows" ||
		!strings.HasPrefix(l.CodeObject, "file:///work/app/libkernels.so#offset=") || l.LoadBase != 0x7f2b9d400000 ||
		l.HSAStatus != "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION" {
		t.Errorf("%+v", l)
	}
}

func TestParseROCgdbWave(t *testing.T) {
	l := parseROCmFile(t, "rocgdb.txt")
	w := l.Wave
	if w == nil || w.Thread != 5 || w.Agent != 1 || w.WorkGroup != [3]uint32{17, 0, 0} || !w.HasLane || w.Lane != 3 ||
		w.WorkItem != [3]uint32{3, 0, 0} || l.Signal != "SIGSEGV" {
		t.Fatalf("%+v %+v", l, w)
	}
	if len(l.Frames) != 5 || l.Frames[0].Function != "element_at" || l.Frames[0].Line != 7 ||
		l.Frames[4].Function != "scatter_rows" || l.Kernel != "scatter_rows" {
		t.Errorf("frames %+v kernel %q", l.Frames, l.Kernel)
	}
}

func TestParseROCmRejectsOtherLogs(t *testing.T) {
	if _, err := ParseROCm(strings.NewReader("Segmentation fault (core dumped)\n")); err == nil {
		t.Error("a log without ROCm messages parsed")
	}
	if IsROCmLog([]byte("========= COMPUTE-SANITIZER\n")) {
		t.Error("compute-sanitizer log taken for ROCm")
	}
}
