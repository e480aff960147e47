// Second translation unit of the -rdc=true build.
#include "functors.cuh"

template <typename Op>
__device__ __forceinline__ float apply_gather(const float* src, const int* index, long i, Op op) {
  fl::Gather<Op> g{src, index, op};
  return g(i);
}

__device__ float combine(const float* src, const int* index, long i, float f) {
  return apply_gather(src, index, i, fl::Scale{f});
}

extern "C" __global__ void rdc_other_kernel(float* dst, const float* src, const int* index, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) {
    dst[i] = apply_gather(src, index, i, fl::Scale{2.0f});
  }
}
