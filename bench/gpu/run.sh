#!/usr/bin/env bash
# run.sh: build a large cubin (many kernels, each a deep __forceinline__
# tower over testdata/cuda/src's headers) with CUDA 11.8, then time
# faultline's inline chains for every instruction against nvdisasm -gi.
#
#   bash bench/gpu/run.sh [KERNELS [-runs N]]   (default 30 kernels; needs shared/tools/cuda-toolchain.sh)
#
# nvdisasm 11.8 -gi needs memory superlinear in the cubin: on a 1 MB cubin (200 kernels)
# it grew past 23 GB and was killed after 2m49s, while faultline resolves all 12432
# addresses; keep KERNELS small enough for nvdisasm to finish.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
n=${1:-30}
[ $# -gt 0 ] && shift
envsh=${CUDA_ENV:-$HOME/.cache/cuda-11.8/env.sh}
[ -f "$envsh" ] && . "$envsh"
command -v nvcc >/dev/null || { echo "nvcc not found: run shared/tools/cuda-toolchain.sh" >&2; exit 1; }
work=${FAULTLINE_BENCH_CACHE:-$HOME/.cache/faultline-bench}/gpu2-$n
mkdir -p "$work"
if [ ! -f "$work/big.sm_90.cubin" ]; then
  {
    echo '#include "functors.cuh"'
    # Eight force-inlined levels per kernel, instantiated per kernel.
    for l in 1 2 3 4 5 6 7 8; do
      echo "template <int K> __device__ __forceinline__ float level$l(const float* p, const int* x, long i) {"
      if [ $l = 1 ]; then echo "  fl::Gather<fl::Scale> g{p, x, fl::Scale{1.5f + K}}; return g(i);"
      else echo "  return level$((l - 1))<K>(p, x, i) * 1.0001f + level$((l - 1))<K>(p, x, i + K);"; fi
      echo "}"
    done
    for k in $(seq 1 "$n"); do
      echo "extern \"C\" __global__ void big_kernel_$k(float* d, const float* s, const int* x, long n) {"
      echo "  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;"
      echo "  if (i < n) fl::store_global(d, i, level8<$k>(s, x, i));"
      echo "}"
    done
  } > "$work/big.cu"
  nvcc ${NVCC_HOST:-} -cubin -lineinfo -O3 -arch=sm_90 -I"$repo/testdata/cuda/src" \
    -o "$work/big.sm_90.cubin" "$work/big.cu"
fi
cd "$repo"
go run ./bench/gpu "$@" "$work/big.sm_90.cubin" testdata/cuda/cubins/kernels.sm_90.cubin
