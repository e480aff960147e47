package logs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline-dev/faultline/internal/testgz"
)

func openGPUSample(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "gpu", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestParseNvdisasmReference reads the real nvdisasm -gi output checked in
// with the test cubins.
func TestParseNvdisasmReference(t *testing.T) {
	l, err := ParseNvdisasm(testgz.Open(t, "../../testdata/cuda/ref/kernels.sm_80.nvdisasm.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range l.Sections {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != ".text.spin_kernel .text._Z12scale_kernelPfPKflf .text.crash_kernel" {
		t.Fatalf("sections: %s", got)
	}
	crash := l.Sections[2]
	byAddr := map[uint64]NvdisasmInstruction{}
	for _, in := range crash.Instructions {
		byAddr[in.Address] = in
	}
	// 0x80 opens a five-level block; 0xc0 (the LDG of the index load)
	// inherits it.
	for _, a := range []uint64{0x80, 0xc0} {
		in, ok := byAddr[a]
		if !ok || in.Function != "crash_kernel" || len(in.Chain) != 5 || in.Annotated != (a == 0x80) ||
			filepath.Base(in.Chain[0].File) != "access.cuh" || in.Chain[0].Line != 8 || in.Chain[1].Line != 19 ||
			in.Chain[4].Line != 20 {
			t.Fatalf("crash_kernel+%#x: %+v", a, in)
		}
	}
	if !strings.HasPrefix(byAddr[0xc0].Text, "@!P0 LDG.E R4, [R6.64]") {
		t.Errorf("crash_kernel+0xc0: %q", byAddr[0xc0].Text)
	}
	// The noinline helper is labelled inside the kernel's section.
	last := crash.Instructions[len(crash.Instructions)-1]
	if last.Function != "$crash_kernel$_Z8checksumPKfi" {
		t.Errorf("last function label %q", last.Function)
	}
}

func TestParseSanitizerMemcheck(t *testing.T) {
	rep, err := ParseSanitizer(openGPUSample(t, "memcheck.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary != 1 || len(rep.Errors) != 1 {
		t.Fatalf("%+v", rep)
	}
	e := rep.Errors[0]
	if e.Access != "read" || e.Size != 4 || e.Space != "global" || e.Offset != 0xd0 || e.Line != 8 ||
		e.Function != "fl::load_global<float>(const float *, long)" || e.Block != [3]uint32{2, 0, 0} ||
		e.Thread != [3]uint32{101, 0, 0} || e.Address != 0x7f3a9c000a14 || len(e.AddressNote) != 2 {
		t.Errorf("error: %+v", e)
	}
	if len(e.DeviceFrames) != 3 || e.DeviceFrames[2].Function != "crash_kernel" || e.DeviceFrames[2].Line != 20 ||
		e.DeviceFrames[0].PC != 0xd0 {
		t.Errorf("device frames: %+v", e.DeviceFrames)
	}
	if len(e.HostFrames) != 4 || e.HostFrames[3].Function != "main" || e.HostFrames[3].Module != "/tmp/crash" ||
		e.HostFrames[0].PC != 0x2e9441 {
		t.Errorf("host frames: %+v", e.HostFrames)
	}
}

func TestParseSanitizerOldFormat(t *testing.T) {
	rep, err := ParseSanitizer(openGPUSample(t, "memcheck_old.txt"))
	if err != nil {
		t.Fatal(err)
	}
	e := rep.Errors[0]
	if e.Access != "write" || e.Size != 4 || e.Function != "crash_kernel" || e.Offset != 0x110 || e.Line != 13 ||
		e.Thread != [3]uint32{7, 0, 0} || e.Address != 0x10 {
		t.Errorf("error: %+v", e)
	}
	if len(e.HostFrames) != 2 || e.HostFrames[0].Function != "cuLaunchKernel" ||
		e.HostFrames[0].Module != "/usr/lib/x86_64-linux-gnu/libcuda.so.1" || e.HostFrames[1].Module != "./crash" {
		t.Errorf("host frames: %+v", e.HostFrames)
	}
}

func TestParseSanitizerRacecheck(t *testing.T) {
	rep, err := ParseSanitizer(openGPUSample(t, "racecheck.txt"))
	if err != nil {
		t.Fatal(err)
	}
	e := rep.Errors[0]
	if e.Function != "race_kernel(int *)" || e.Offset != 0x150 || e.Line != 10 || e.Access != "write" ||
		e.Race == nil || e.Race.Access != "Read" || e.Race.PC != 0x1a0 || e.Race.Line != 12 {
		t.Errorf("race: %+v %+v", e, e.Race)
	}
}

func TestParseCUDAGDB(t *testing.T) {
	l, err := ParseCUDAGDB(openGPUSample(t, "cudagdb.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Exception != "Warp Illegal Address" || l.ErrorPC != 0x7fffd70002d0 || l.ErrorLocation != "access.cuh:8" {
		t.Errorf("exception: %+v", l)
	}
	if f := l.Focus; f == nil || f.Block != [3]uint32{2, 0, 0} || f.Thread != [3]uint32{96, 0, 0} || f.SM != 17 || f.Warp != 3 {
		t.Errorf("focus: %+v", l.Focus)
	}
	if len(l.Frames) != 1 {
		t.Fatalf("frames: %+v", l.Frames)
	}
	f := l.Frames[0]
	if f.Function != "void fl::for_each_item<fl::Gather<fl::Scale> >(float*, long, fl::Gather<fl::Scale>)::{lambda(int)#1}" ||
		f.Launch != "<<<(4,1,1),(128,1,1)>>>" || f.Line != 8 || f.PC != 0x7fffd70002e0 ||
		f.InlinedFrom != "_ZNK2fl6GatherINS_5ScaleEEclEl inlined from functors.cuh:20" {
		t.Errorf("frame: %+v", f)
	}
}

func TestParseTorchCUDAError(t *testing.T) {
	e, err := ParseTorchCUDAError(openGPUSample(t, "torch.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if e.ExceptionType != "RuntimeError" || e.Error != "an illegal memory access was encountered" || !e.Async ||
		len(e.Frames) != 2 || e.Frames[1].Function != "<module>" || e.Frames[1].Line != 27 ||
		e.Frames[1].Code != "print(data[index])" {
		t.Errorf("%+v", e)
	}
}

func TestGPUParsersRejectOtherText(t *testing.T) {
	const text = "just some program output\nSegmentation fault\n"
	if _, err := ParseSanitizer(strings.NewReader(text)); err == nil {
		t.Error("ParseSanitizer accepted plain text")
	}
	if _, err := ParseCUDAGDB(strings.NewReader(text)); err == nil {
		t.Error("ParseCUDAGDB accepted plain text")
	}
	if _, err := ParseTorchCUDAError(strings.NewReader(text)); err == nil {
		t.Error("ParseTorchCUDAError accepted plain text")
	}
	if _, err := ParseNvdisasm(strings.NewReader(text)); err == nil {
		t.Error("ParseNvdisasm accepted plain text")
	}
}
