# AMD GPU code objects (analysis/amdgpu, gpu-lines): the oracle and the
# bundler the tests compare with — llvm-symbolizer-14/llvm-objcopy-14
# (llvm-14) and clang-offload-bundler-14 (clang-tools-14). The checked-in
# code objects in testdata/amdgpu need no compiler; testdata/amdgpu/build.sh
# (clang-14, clang-19) rebuilds them.
command -v llvm-symbolizer-14 >/dev/null && command -v llvm-objcopy-14 >/dev/null ||
	apt_install llvm-14
command -v clang-offload-bundler-14 >/dev/null || apt_install clang-tools-14
