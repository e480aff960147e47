// First translation unit of the -rdc=true build: the kernel calls a device
// function defined in rdc_b.cu, resolved by nvlink.
#include "functors.cuh"

__device__ float combine(const float* src, const int* index, long i, float f);

__device__ __forceinline__ float pick(const float* src, const int* index, long i, float f) {
  return combine(src, index, i, f) + fl::load_global(src, i);
}

extern "C" __global__ void rdc_kernel(float* dst, const float* src, const int* index, long n, float f) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) {
    fl::store_global(dst, i, pick(src, index, i, f));
  }
}

__device__ float sum_prefix(const float* src, long n);

template <int Unroll>
__device__ __forceinline__ void prefix_rows(float* dst, const float* src, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
#pragma unroll
  for (int u = 0; u < Unroll; ++u) {
    if (i * Unroll + u < n) {
      fl::store_global(dst, i * Unroll + u, sum_prefix(src, i * Unroll + u));
    }
  }
}

extern "C" __global__ void rdc_prefix_kernel(float* dst, const float* src, long n) {
  prefix_rows<2>(dst, src, n);
}
