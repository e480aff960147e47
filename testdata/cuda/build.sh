#!/usr/bin/env bash
# Rebuilds the cubins and reference outputs in this directory with CUDA 11.8's
# nvcc/nvlink/nvdisasm and elfutils' eu-readelf, unpacked (not installed) by
# ../../../shared/tools/cuda-toolchain.sh (or any CUDA 11.8 on PATH). No GPU is
# needed. The outputs are checked in so tests need no NVIDIA tools.
#
#   testdata/cuda/build.sh [CUDA_ENV]   # CUDA_ENV: env.sh from cuda-toolchain.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
envsh=${1:-$HOME/.cache/cuda-11.8/env.sh}
[ -f "$envsh" ] && . "$envsh"
command -v nvcc >/dev/null || { echo "nvcc not found: run shared/tools/cuda-toolchain.sh first" >&2; exit 1; }
cd "$here/src"
out="$here/cubins"; ref="$here/ref"
mkdir -p "$out" "$ref"
host=${NVCC_HOST:-}
for sm in 80 90; do
  # Whole-program builds of one translation unit.
  nvcc $host -cubin -lineinfo -O3 -arch=sm_$sm -o "$out/kernels.sm_$sm.cubin" kernels.cu
  # Separate compilation: two relocatable objects linked by nvlink.
  nvcc $host -cubin -lineinfo -O3 -rdc=true -arch=sm_$sm -o "$out/rdc_a.sm_$sm.cubin" rdc_a.cu
  nvcc $host -cubin -lineinfo -O3 -rdc=true -arch=sm_$sm -o "$out/rdc_b.sm_$sm.cubin" rdc_b.cu
  nvlink -arch=sm_$sm -cubin -o "$out/rdc_linked.sm_$sm.cubin" "$out/rdc_a.sm_$sm.cubin" "$out/rdc_b.sm_$sm.cubin" 2>/dev/null ||
    nvlink --arch=sm_$sm -o "$out/rdc_linked.sm_$sm.cubin" "$out/rdc_a.sm_$sm.cubin" "$out/rdc_b.sm_$sm.cubin"
done
# A host executable with an embedded fatbin (sm_80 + sm_90 cubins).
nvcc $host -lineinfo -O3 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
  -c -o /tmp/fl_kernels_host.o kernels.cu
cp /tmp/fl_kernels_host.o "$out/kernels_host.o"
for c in "$out"/*.cubin; do
  b=$(basename "$c" .cubin)
  nvdisasm -ndf -c -gi "$c" > "$ref/$b.nvdisasm.txt"
  eu-readelf --debug-dump=line "$c" > "$ref/$b.readelf-line.txt" 2>&1 || true
done
gzip -9nf "$ref"/*.txt
echo "built: $(ls "$out" | wc -l) files in $out, references in $ref"
