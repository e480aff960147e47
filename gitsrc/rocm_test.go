package gitsrc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline-dev/faultline/analysis"
	"github.com/faultline-dev/faultline/gitsrc/moduleorigin"
)

// rpmBuildPrefix is the build directory of AMD's ROCm packages, as their
// DWARF names it.
const rpmBuildPrefix = "/longer_pathname_so_that_rpms_can_support_packaging_the_debug_info_for_all_os_profiles/src"

// rocmInstall makes a sysroot shaped like a ROCm install: /opt/rocm-6.2.0
// with .info/version, the /opt/rocm link, libraries (copies of a real ELF
// file without a package note) and dpkg's status naming two of them.
func rocmInstall(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	elf, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	put := func(rel string, data []byte) { putFile(t, root, rel, data) }
	put("opt/rocm-6.2.0/.info/version", []byte("6.2.0-66\n"))
	for _, lib := range []string{"libamdhip64.so.6", "libhsa-runtime64.so.1", "librccl.so.1", "libhipblaslt.so.0",
		"librocblas.so.4", "libMIOpen.so.1"} {
		put("opt/rocm-6.2.0/lib/"+lib, elf)
	}
	if err := os.Symlink("rocm-6.2.0", filepath.Join(root, "opt/rocm")); err != nil {
		t.Fatal(err)
	}
	put("opt/venv/lib/python3.11/site-packages/jax_plugins/xla_rocm60/xla_rocm_plugin.so", elf)
	// The PJRT plugin wheel installs jax_plugins/xla_rocm60 (top_level.txt says so).
	put("opt/venv/lib/python3.11/site-packages/jax_rocm60_pjrt-0.4.31.dist-info/METADATA",
		[]byte("Metadata-Version: 2.1\nName: jax-rocm60-pjrt\nVersion: 0.4.31\n"))
	put("opt/venv/lib/python3.11/site-packages/jax_rocm60_pjrt-0.4.31.dist-info/top_level.txt", []byte("jax_plugins\n"))
	put("var/lib/dpkg/status", []byte("Package: rocblas\nStatus: install ok installed\nVersion: 4.2.0.60200-66~22.04\n\n"+
		"Package: miopen-hip\nStatus: install ok installed\nVersion: 3.2.0.60200-66~22.04\n\n"))
	put("var/lib/dpkg/info/rocblas.list", []byte("/opt/rocm-6.2.0/lib/librocblas.so.4\n"))
	put("var/lib/dpkg/info/miopen-hip.list", []byte("/opt/rocm-6.2.0/lib/libMIOpen.so.1\n"))
	return root
}

// TestROCmInventory: every ROCm component of a JAX-on-ROCm stack is named
// with its repository and release branch or tag, from the install's
// .info/version (through the /opt/rocm link's path too) and dpkg.
func TestROCmInventory(t *testing.T) {
	sysroot := rocmInstall(t)
	mods := map[string]string{
		"/opt/rocm/lib/libamdhip64.so.6":                                                   "hipamd/src/hip_module.cpp",
		"/opt/rocm/lib/libhsa-runtime64.so.1":                                              "runtime/hsa-runtime/core/runtime/runtime.cpp",
		"/opt/rocm-6.2.0/lib/librccl.so.1":                                                 "src/enqueue.cc",
		"/opt/rocm/lib/libhipblaslt.so.0":                                                  "library/src/amd_detail/rocblaslt/src/rocblaslt_mat.cpp",
		"/opt/rocm-6.2.0/lib/librocblas.so.4":                                              "library/src/blas3/rocblas_gemm.cpp",
		"/opt/rocm-6.2.0/lib/libMIOpen.so.1":                                               "src/ocl/convolutionocl.cpp",
		"/opt/venv/lib/python3.11/site-packages/jax_plugins/xla_rocm60/xla_rocm_plugin.so": "xla/stream_executor/rocm/rocm_driver.cc",
	}
	c := &analysis.Crash{}
	frameFiles := map[string][]string{}
	th := analysis.Thread{ID: 1, Crashed: true}
	for m, file := range mods {
		c.Modules = append(c.Modules, analysis.Module{Path: m})
		full := rpmBuildPrefix + "/" + file
		frameFiles[m] = []string{full}
		th.Frames = append(th.Frames, analysis.Frame{Module: m, File: full, Line: 1})
	}
	c.Threads = []analysis.Thread{th}
	comps, problems := inventory(c, &Options{Sysroot: sysroot}, frameFiles)
	want := map[string][2]string{ // name -> repo, first revision
		"clr":          {"https://github.com/ROCm/clr", "rocm-6.2.0"},
		"rocr-runtime": {"https://github.com/ROCm/ROCR-Runtime", "rocm-6.2.0"},
		"rccl":         {"https://github.com/ROCm/rccl", "rocm-6.2.0"},
		"hipblaslt":    {"https://github.com/ROCm/hipBLASLt", "rocm-6.2.0"},
		"rocblas":      {"https://github.com/ROCm/rocBLAS", "rocm-6.2.0"},
		"miopen":       {"https://github.com/ROCm/MIOpen", "rocm-6.2.0"},
	}
	got := map[string][2]string{}
	for _, comp := range comps {
		got[comp.Name] = [2]string{comp.Repo, comp.revisions[0]}
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: got %v, want %v (all: %v; problems %+v)", name, got[name], w, got, problems)
		}
	}
	if g := got["xla-rocm"]; g != [2]string{"https://github.com/ROCm/xla", "rocm-jaxlib-v0.4.31"} {
		t.Errorf("xla_rocm_plugin: %v (all %v, problems %+v)", g, got, problems)
	}
}

// TestROCmBuildPrefixMapsOntoCheckout: DWARF paths under the RPM build
// prefix land on the monorepo and legacy checkouts' files.
func TestROCmBuildPrefixMapsOntoCheckout(t *testing.T) {
	ix := newSuffixIndex([]treeFile{{path: "projects/rocblas/library/src/blas3/rocblas_gemm.cpp"},
		{path: "projects/miopen/src/ocl/convolutionocl.cpp"}, {path: "projects/hipblaslt/library/src/amd_detail/rocblaslt/src/rocblaslt_mat.cpp"},
		{path: "projects/rocblas/clients/gtest/rocblas_gemm.cpp"}})
	for file, want := range map[string]string{
		rpmBuildPrefix + "/rocm-libraries/projects/rocblas/library/src/blas3/rocblas_gemm.cpp": "projects/rocblas/library/src/blas3/rocblas_gemm.cpp",
		rpmBuildPrefix + "/rocBLAS/library/src/blas3/rocblas_gemm.cpp":                         "projects/rocblas/library/src/blas3/rocblas_gemm.cpp",
		rpmBuildPrefix + "/MIOpen/src/ocl/convolutionocl.cpp":                                  "projects/miopen/src/ocl/convolutionocl.cpp",
	} {
		if got, n := ix.match(file); got != want || n < 3 {
			t.Errorf("%s → %s (%d elements), want %s", file, got, n, want)
		}
	}
	if v := moduleorigin.RocmInstallVersion(rocmInstall(t), "/opt/rocm/lib/libamdhip64.so.6"); v != "6.2.0" {
		t.Errorf(".info/version through /opt/rocm: %q", v)
	}
}
