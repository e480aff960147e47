package amdgpu

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func readFile(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(testdataDir, rel)) }

func readTestdata(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := readFile(rel)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestBundlesHoldTheStandaloneObjects checks that the code objects found
// in the plain bundle (clang-offload-bundler 14) and in the zstd-compressed
// one (clang-offload-bundler 19 -compress) are byte for byte the
// standalone code objects they were bundled from.
func TestBundlesHoldTheStandaloneObjects(t *testing.T) {
	for _, tc := range []struct {
		bundle string
		want   []string
	}{
		{"bundles/scatter.hipfb", []string{"gfx90a", "gfx1030"}},
		{"bundles/scatter.ccob", []string{"gfx942", "gfx1100"}},
	} {
		images, problems, err := Extract(readTestdata(t, tc.bundle))
		if err != nil || len(problems) > 0 {
			t.Fatalf("%s: %v %v", tc.bundle, err, problems)
		}
		if len(images) != len(tc.want) {
			t.Fatalf("%s: %d images, want %d", tc.bundle, len(images), len(tc.want))
		}
		for i, arch := range tc.want {
			if images[i].Target != arch {
				t.Errorf("%s image %d: target %q, want %q", tc.bundle, i, images[i].Target, arch)
			}
			if !bytes.Equal(images[i].Data, readTestdata(t, "co/scatter."+arch+".co")) {
				t.Errorf("%s: %s entry differs from co/scatter.%s.co", tc.bundle, arch, arch)
			}
		}
	}
}

// TestHostLibraryMatchesBundler unbundles the first bundle of the host
// library's .hip_fatbin with clang-offload-bundler and compares its code
// objects with what Extract finds there.
func TestHostLibraryMatchesBundler(t *testing.T) {
	bundler := needTool(t, "clang-offload-bundler-14")
	objcopy := needTool(t, "llvm-objcopy-14")
	lib := filepath.Join(testdataDir, "host/libkernels.so")
	tmp := t.TempDir()
	fatbin := filepath.Join(tmp, "fatbin")
	if out, err := exec.Command(objcopy, "--dump-section", ".hip_fatbin="+fatbin, lib, filepath.Join(tmp, "lib.so")).CombinedOutput(); err != nil {
		t.Fatalf("llvm-objcopy: %v\n%s", err, out)
	}
	images, problems, err := Extract(readTestdata(t, "host/libkernels.so"))
	if err != nil || len(problems) > 0 {
		t.Fatalf("%v %v", err, problems)
	}
	if len(images) != 4 {
		t.Fatalf("%d code objects in .hip_fatbin, want 4 (2 units x gfx90a, gfx1030)", len(images))
	}
	for _, img := range images[:2] {
		if !strings.HasPrefix(img.Where, "bundle 1 ") {
			t.Fatalf("%s: want the first bundle's entries first", img.Where)
		}
		out := filepath.Join(tmp, img.Target+".co")
		cmd := exec.Command(bundler, "-type=o", "-unbundle", "-inputs="+fatbin,
			"-targets=hipv4-amdgcn-amd-amdhsa--"+img.Target, "-outputs="+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("clang-offload-bundler: %v\n%s", err, b)
		}
		want, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(img.Data, want) {
			t.Errorf("%s: %d bytes, clang-offload-bundler gives %d", img.Where, len(img.Data), len(want))
		}
	}
}

// compressZlibV3 writes the bundle as a version-3 CCOB with zlib, the
// other method and header layout clang-offload-bundler writes.
func compressZlibV3(t *testing.T, plain []byte) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(plain)
	w.Close()
	h := make([]byte, 32)
	copy(h, ccobMagic)
	binary.LittleEndian.PutUint16(h[4:], 3)
	binary.LittleEndian.PutUint16(h[6:], ccobZlib)
	binary.LittleEndian.PutUint64(h[8:], uint64(32+z.Len()))
	binary.LittleEndian.PutUint64(h[16:], uint64(len(plain)))
	return append(h, z.Bytes()...)
}

func TestCompressedZlibV3AndConcatenation(t *testing.T) {
	plain := readTestdata(t, "bundles/scatter.hipfb")
	ccob := compressZlibV3(t, plain)
	zstdBundle := readTestdata(t, "bundles/scatter.ccob")
	// Two compressed bundles back to back, with alignment padding, as
	// a linked library's .hip_fatbin holds them.
	region := append(append([]byte{}, ccob...), make([]byte, 4096-len(ccob)%4096)...)
	region = append(region, zstdBundle...)
	images, problems := walkBundles(region, "test")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var targets []string
	for _, img := range images {
		targets = append(targets, img.Target)
	}
	if got := strings.Join(targets, ","); got != "gfx90a,gfx1030,gfx942,gfx1100" {
		t.Fatalf("targets %s", got)
	}
	if !bytes.Equal(images[0].Data, readTestdata(t, "co/scatter.gfx90a.co")) {
		t.Error("zlib bundle's gfx90a object differs")
	}
}

// TestMalformedBundles: damaged headers give a BundleError with the
// offset, never a panic or an allocation the data does not back.
func TestMalformedBundles(t *testing.T) {
	plain := readTestdata(t, "bundles/scatter.hipfb")
	ccob := readTestdata(t, "bundles/scatter.ccob")
	set := func(b []byte, off int, v uint64) []byte {
		c := append([]byte{}, b...)
		binary.LittleEndian.PutUint64(c[off:], v)
		return c
	}
	set32 := func(b []byte, off int, v uint32) []byte {
		c := append([]byte{}, b...)
		binary.LittleEndian.PutUint32(c[off:], v)
		return c
	}
	cases := map[string]struct {
		data []byte
		want string
	}{
		"zero entries":         {set(plain, 24, 0), "implausible entry count 0"},
		"huge entry count":     {set(plain, 24, 1<<40), "implausible entry count"},
		"truncated count":      {plain[:28], "truncated entry count"},
		"truncated entry":      {plain[:40], "truncated entry header"},
		"payload past end":     {set(plain, 40, 1<<62), "beyond the bundle"},
		"id length past end":   {set(plain, 48, 1<<20), "ID length"},
		"ccob bad version":     {append([]byte("CCOB\x09\x00\x01\x00"), make([]byte, 40)...), "unknown compressed-bundle version 9"},
		"ccob truncated":       {ccob[:10], "truncated compressed-bundle header"},
		"ccob total too big":   {set32(ccob, 8, 1<<30), "total size"},
		"ccob bomb":            {set32(ccob, 12, 0xffffffff), "over the"},
		"ccob wrong raw size":  {set32(ccob, 12, 100), "header says 100"},
		"ccob unknown method":  {append(append([]byte{}, ccob[:6]...), append([]byte{7, 0}, ccob[8:]...)...), "unknown compression method 7"},
		"ccob corrupt payload": {append(append([]byte{}, ccob[:24]...), bytes.Repeat([]byte{0xAA}, len(ccob)-24)...), "zstd"},
	}
	for name, tc := range cases {
		_, problems, err := Extract(tc.data)
		msg := strings.Join(problems, "; ")
		if err != nil {
			msg += "; " + err.Error()
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q, want it to mention %q", name, msg, tc.want)
		}
	}
	var be *BundleError
	if _, _, err := ParseBundle(plain[:40]); !errors.As(err, &be) || be.Off != 32 {
		t.Errorf("truncated entry: %v, want a BundleError at offset 0x20", err)
	}
}

func TestNotAnAMDGPUFile(t *testing.T) {
	for name, data := range map[string][]byte{
		"host object without device code": readTestdata(t, "../cuda/cubins/kernels_host.o"),
		"random bytes":                    []byte("hello, this is not a bundle"),
	} {
		if _, _, err := Extract(data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
