package moduleorigin

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/faultline-dev/faultline/internal/lazyregexp"
)

// A RegistryEntry maps a well-known component's modules and versions to its
// repository and the tags or branches its releases are cut from.
type RegistryEntry struct {
	Name string
	// modules matches the module path (its last elements).
	modules *regexp.Regexp
	// python and dpkg name the Python distribution and Debian packages;
	// sources the Debian source packages (dpkg status "Source:") and other
	// names the component goes by (a copyright file's Upstream-Name).
	python  []string
	dpkg    *regexp.Regexp
	sources *regexp.Regexp
	// Repo and Revisions give the repository and candidate revisions for a version.
	Repo      func(version string) string
	Revisions func(version string) []string
	// Branch is the repository's default branch, for reviewing offline.
	Branch string
	// Version finds the release in the module file itself: its real
	// file name, symbol-version definitions, version strings.
	Version *versionClues
}

func fixed(url string) func(string) string { return func(string) string { return url } }

// publicVersion drops a PEP 440 local version label and Debian revision.
func publicVersion(v string) string {
	if i := strings.IndexByte(v, '+'); i >= 0 {
		v = v[:i]
	}
	if i := strings.IndexByte(v, ':'); i >= 0 { // Debian epoch
		v = v[i+1:]
	}
	return v
}

// rocmVersion parses "7.2", "7.2.0" or a ROCm Debian version such as
// "6.2.41133.60200-crdnnh.04" (the fourth field encodes 6.2.0) into
// major, minor, patch.
func rocmVersion(v string) (int, int, int, bool) {
	v = publicVersion(v)
	if i := strings.IndexByte(v, '-'); i >= 0 {
		v = v[:i]
	}
	f := strings.Split(v, ".")
	if len(f) >= 4 && len(f[3]) == 5 {
		if n, err := strconv.Atoi(f[3]); err == nil {
			return n / 10000, n / 100 % 100, n % 100, true
		}
	}
	var nums [3]int
	for i := 0; i < 3 && i < len(f); i++ {
		n, err := strconv.Atoi(f[i])
		if err != nil {
			return 0, 0, 0, false
		}
		nums[i] = n
	}
	return nums[0], nums[1], nums[2], len(f) >= 2
}

// rocm builds a registry entry for a ROCm component: from ROCm 7.0 on its
// source lives in a monorepo (rocm-systems or rocm-libraries) on branch
// release/rocm-rel-X.Y; before that in its own repository, tagged rocm-X.Y.Z.
func rocm(name, module, dpkg, monorepo, legacy string) RegistryEntry {
	return RegistryEntry{
		Name:    name,
		modules: regexp.MustCompile(module),
		dpkg:    regexp.MustCompile(dpkg),
		Repo: func(v string) string {
			if ma, _, _, ok := rocmVersion(v); ok && ma < 7 {
				return legacy
			}
			return monorepo
		},
		Revisions: func(v string) []string {
			ma, mi, pa, ok := rocmVersion(v)
			if !ok {
				return nil
			}
			if ma < 7 {
				return []string{fmt.Sprintf("rocm-%d.%d.%d", ma, mi, pa)}
			}
			return []string{fmt.Sprintf("release/rocm-rel-%d.%d", ma, mi), fmt.Sprintf("rocm-%d.%d.%d", ma, mi, pa)}
		},
	}
}

// registry lists the stacks faultline's users run (seed 000's component
// table), built on first use: its patterns compile then.
var registry = sync.OnceValue(registryList)

func registryList() []RegistryEntry {
	return []RegistryEntry{
		{Name: "pytorch", modules: regexp.MustCompile(`(^|/)(libtorch(_cpu|_cuda|_hip|_python|_global_deps)?|libc10(_cuda|_hip)?|libshm)\.so|/torch/_C[.a-z0-9_-]*\.so$`),
			python: []string{"torch"}, sources: regexp.MustCompile(`^pytorch(-cuda|-rocm)?$`), Branch: "main",
			Repo: fixed("https://github.com/pytorch/pytorch"), Revisions: releaseTags(vTags)},
		{Name: "jax", Branch: "main", modules: regexp.MustCompile(`(^|/)(xla_extension|_jax)[.a-z0-9_-]*\.so$|/jaxlib/.*\.so$`),
			python: []string{"jaxlib", "jax"}, Repo: fixed("https://github.com/jax-ml/jax"),
			Revisions: func(v string) []string {
				v = publicVersion(v)
				return []string{"jax-v" + v, "jaxlib-v" + v}
			}},
		{Name: "xla-rocm", modules: regexp.MustCompile(`(^|/)xla_rocm_plugin[.a-z0-9_-]*\.so$`),
			python: []string{"jax_rocm7_pjrt", "jax_rocm60_pjrt", "jax_rocm7_plugin", "jax_rocm60_plugin", "jax_rocm_plugin"},
			Repo:   fixed("https://github.com/ROCm/xla"),
			// ROCm/xla keeps one branch per JAX release the plugin is built for.
			Revisions: func(v string) []string { return []string{"rocm-jaxlib-v" + publicVersion(v)} }},
		{Name: "triton", Branch: "main", modules: regexp.MustCompile(`(^|/)libtriton\.so$|/triton/_C/.*\.so$`),
			python: []string{"triton", "pytorch_triton", "pytorch_triton_rocm"}, Repo: fixed("https://github.com/triton-lang/triton"), Revisions: releaseTags(vTags)},
		{Name: "cutlass", modules: regexp.MustCompile(`(^|/)libcutlass[.a-z0-9_-]*\.so$`),
			python: []string{"nvidia_cutlass", "cutlass"}, Repo: fixed("https://github.com/NVIDIA/cutlass"), Revisions: releaseTags(vTags)},
		{Name: "nccl", modules: regexp.MustCompile(`(^|/)libnccl\.so(\.[0-9.]+)?$`),
			python: []string{"nvidia_nccl_cu12", "nvidia_nccl_cu11"}, dpkg: regexp.MustCompile(`^libnccl2$`), sources: regexp.MustCompile(`^nccl$`),
			Repo: fixed("https://github.com/NVIDIA/nccl"), Branch: "master",
			Revisions: func(v string) []string {
				v = publicVersion(v) // Debian: 2.21.5-1+cuda12.4 → 2.21.5-1
				if !strings.Contains(v, "-") {
					return []string{"v" + v + "-1", "v" + v}
				}
				return []string{"v" + v}
			}},
		rocm("clr", `(^|/)libamdhip64\.so(\.[0-9.]+)?$`, `^hip-runtime-amd`, "https://github.com/ROCm/rocm-systems", "https://github.com/ROCm/clr"),
		rocm("rocr-runtime", `(^|/)libhsa-runtime64\.so(\.[0-9.]+)?$`, `^hsa-rocr`, "https://github.com/ROCm/rocm-systems", "https://github.com/ROCm/ROCR-Runtime"),
		rocm("rocprofiler-sdk", `(^|/)librocprofiler-sdk[a-z-]*\.so(\.[0-9.]+)?$`, `^rocprofiler-sdk`, "https://github.com/ROCm/rocm-systems", "https://github.com/ROCm/rocprofiler-sdk"),
		rocm("rccl", `(^|/)librccl\.so(\.[0-9.]+)?$`, `^rccl`, "https://github.com/ROCm/rccl", "https://github.com/ROCm/rccl"),
		rocm("hipblaslt", `(^|/)libhipblaslt\.so(\.[0-9.]+)?$`, `^hipblaslt`, "https://github.com/ROCm/rocm-libraries", "https://github.com/ROCm/hipBLASLt"),
		rocm("rocblas", `(^|/)librocblas\.so(\.[0-9.]+)?$`, `^rocblas`, "https://github.com/ROCm/rocm-libraries", "https://github.com/ROCm/rocBLAS"),
		rocm("miopen", `(^|/)libMIOpen\.so(\.[0-9.]+)?$`, `^miopen-hip`, "https://github.com/ROCm/rocm-libraries", "https://github.com/ROCm/MIOpen"),
		{Name: "vllm", modules: regexp.MustCompile(`/vllm/.*\.so$`),
			python: []string{"vllm"}, Repo: fixed("https://github.com/vllm-project/vllm"), Revisions: releaseTags(vTags)},
		{Name: "flash-attention", modules: regexp.MustCompile(`(^|/)flash_attn[a-z0-9_]*[.a-z0-9_-]*\.so$`),
			python: []string{"flash_attn"}, Repo: fixed("https://github.com/Dao-AILab/flash-attention"), Revisions: releaseTags(vTags)},
	}
}

// allRegistry is every entry: the ML stacks, then the common upstreams.
var allRegistry = sync.OnceValue(func() []RegistryEntry {
	return append(append([]RegistryEntry{}, registry()...), commonUpstreams()...)
})

// RegistryFor finds the registry entry for a component: by one of its
// names (upstream name, Python distribution, Debian binary or source
// package, conda package), first name first, else by the module's file name.
func RegistryFor(module string, names ...string) *RegistryEntry {
	for _, name := range names {
		if name == "" {
			continue
		}
		norm := normalizeName(name)
		all := allRegistry()
		for i := range all {
			if all[i].knows(name, norm) {
				return &all[i]
			}
		}
	}
	if module != "" {
		all := allRegistry()
		for i := range all {
			if m := all[i].modules; m != nil && m.MatchString(module) {
				return &all[i]
			}
		}
	}
	return nil
}

// knows reports whether name (norm normalised) is one of the entry's names.
func (e *RegistryEntry) knows(name, norm string) bool {
	if normalizeName(e.Name) == norm {
		return true
	}
	for _, p := range e.python {
		if normalizeName(p) == norm {
			return true
		}
	}
	return e.dpkg != nil && e.dpkg.MatchString(name) || e.sources != nil && e.sources.MatchString(name)
}

// normalizeName is PEP 503 name normalisation with "_" for separators.
func normalizeName(s string) string {
	s = strings.ToLower(s)
	return strings.NewReplacer("-", "_", ".", "_").Replace(s)
}

// RocmPathVersion reads the ROCm version from an install path such as
// /opt/rocm-6.2.0/lib/libamdhip64.so.
var rocmPathRE = lazyregexp.New(`/rocm-([0-9]+\.[0-9]+(\.[0-9]+)?)/`)

func RocmPathVersion(module string) string {
	if m := rocmPathRE.FindStringSubmatch(module); m != nil {
		return m[1]
	}
	return ""
}

// rocmRootRE finds the ROCm install a module lies in: /opt/rocm,
// /opt/rocm-6.2.0, and the same under a prefix (a container's root).
var rocmRootRE = lazyregexp.New(`^(.*/rocm(-[0-9][0-9.]*)?)/(lib|lib64|bin|llvm|share|libexec)(/|$)`)

// RocmInstallVersion reads the version of the ROCm install holding module
// from its .info/version ("6.2.0-66": the release and the build number),
// looked up under sysroot; "" when module is not in a ROCm install or the
// file is missing.
func RocmInstallVersion(sysroot, module string) string {
	m := rocmRootRE.FindStringSubmatch(module)
	if m == nil {
		return ""
	}
	b, err := readSmall(filepath.Join(sysroot, m[1], ".info", "version"))
	if err != nil {
		return ""
	}
	v, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	v, _, _ = strings.Cut(strings.TrimSpace(v), "-") // the build number
	if _, _, _, ok := rocmVersion(v); !ok {
		return ""
	}
	return v
}

// ModuleRE is the component regular expression for one module file.
func ModuleRE(module string) string {
	return `(^|/)` + regexp.QuoteMeta(path.Base(module)) + `$`
}
