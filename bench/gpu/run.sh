#!/usr/bin/env bash
# run.sh: build a large cubin (many kernels, each a deep __forceinline__
# tower over testdata/cuda/src's headers) with CUDA 11.8, then time
# faultline's inline chains for every instruction against nvdisasm -gi.
#
#   bash bench/gpu/run.sh [KERNELS]     (default 200; needs shared/tools/cuda-toolchain.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
n=${1:-200}
envsh=${CUDA_ENV:-$HOME/.cache/cuda-11.8/env.sh}
[ -f "$envsh" ] && . "$envsh"
command -v nvcc >/dev/null || { echo "nvcc not found: run shared/tools/cuda-toolchain.sh" >&2; exit 1; }
work=${FAULTLINE_BENCH_CACHE:-$HOME/.cache/faultline-bench}/gpu-$n
mkdir -p "$work"
if [ ! -f "$work/big.sm_90.cubin" ]; then
  {
    echo '#include "functors.cuh"'
    echo 'template <int K> struct Step { __device__ __forceinline__ float operator()(float x) const { return Step<K - 1>{}(x) * 1.0001f + K; } };'
    echo 'template <> struct Step<0> { __device__ __forceinline__ float operator()(float x) const { return x; } };'
    echo 'template <int K> __device__ __forceinline__ float tower(const float* p, const int* idx, long i) {'
    echo '  fl::Gather<fl::Scale> g{p, idx, fl::Scale{1.5f}}; return Step<K % 9 + 3>{}(g(i)); }'
    for k in $(seq 1 "$n"); do
      echo "extern \"C\" __global__ void big_kernel_$k(float* d, const float* s, const int* x, long n) {"
      echo "  fl::for_each_item(d, n, [=] __device__ (long i) { return tower<$k>(s, x, i) + tower<$((k + 1))>(s, x, i + 1); });"
      echo "}"
    done
  } > "$work/big.cu"
  nvcc ${NVCC_HOST:-} -cubin -lineinfo -O3 -arch=sm_90 --extended-lambda -I"$repo/testdata/cuda/src" \
    -o "$work/big.sm_90.cubin" "$work/big.cu"
fi
cd "$repo"
go run ./bench/gpu "$@" "$work/big.sm_90.cubin" testdata/cuda/cubins/kernels.sm_90.cubin
