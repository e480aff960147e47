#!/usr/bin/env bash
# Rebuilds the AMDGPU test data from src/ with Debian's LLVM (no ROCm needed):
#   apt-get install clang-14 clang-tools-14 lld-14 llvm-14     (gfx90a, gfx1030, bundles)
#   apt-get install clang-19 clang-tools-19 lld-19             (gfx942, gfx1100, compressed bundle)
# clang-14 knows no gfx942/gfx1100, and only clang-offload-bundler >= 17 writes
# compressed ("CCOB") bundles, hence the second toolchain.
set -euo pipefail
cd "$(dirname "$0")"
src=src
flags=(-x hip -nogpulib -nogpuinc -g -O2 -I"$src" -fdebug-prefix-map="$PWD"=.)
mkdir -p co bundles host

device() { # clang arch source output
	"$1" "${flags[@]}" --offload-arch="$2" --cuda-device-only --no-gpu-bundle-output "$3" -o "$4"
}

# Standalone code objects (what llvm-symbolizer reads directly).
for unit in scatter norm; do
	for arch in gfx90a gfx1030; do
		device clang-14 "$arch" "$src/$unit.hip" "co/$unit.$arch.co"
	done
	for arch in gfx942 gfx1100; do
		device clang-19 "$arch" "$src/$unit.hip" "co/$unit.$arch.co"
	done
done

# A standalone uncompressed bundle, as clang-offload-bundler writes for .hipfb
# (an empty host entry first, like hipcc's).
: >/tmp/faultline-amdgpu-empty-host.o
clang-offload-bundler-14 -type=o \
	-targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a,hipv4-amdgcn-amd-amdhsa--gfx1030 \
	-inputs=/tmp/faultline-amdgpu-empty-host.o,co/scatter.gfx90a.co,co/scatter.gfx1030.co \
	-outputs=bundles/scatter.hipfb
# A compressed bundle ("CCOB", what ROCm 6 ships) of the clang-19 objects.
clang-offload-bundler-19 -type=o -compress \
	-targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx942,hipv4-amdgcn-amd-amdhsa--gfx1100 \
	-input=/tmp/faultline-amdgpu-empty-host.o -input=co/scatter.gfx942.co -input=co/scatter.gfx1100.co \
	-output=bundles/scatter.ccob
rm -f /tmp/faultline-amdgpu-empty-host.o

# A host shared library the way HIP ships kernels: each translation unit's
# bundle in .hip_fatbin (two bundles, gfx90a and gfx1030 each). The HIP
# runtime's registration functions stay undefined; nothing loads it.
clang-14 "${flags[@]}" --offload-arch=gfx90a --offload-arch=gfx1030 -fPIC -shared -fuse-ld=lld \
	"$src/scatter.hip" "$src/norm.hip" -o host/libkernels.so
llvm-strip-14 --strip-debug host/libkernels.so
ls -l co bundles host
