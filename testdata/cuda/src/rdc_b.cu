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

// Never called: nvlink drops its code but keeps its line sequence, which
// then describes no section (an "orphan" sequence at address 0).
__device__ __noinline__ float unused_helper(const float* src, long i) {
  return fl::load_global(src, i) * 3.0f;
}

template <typename T>
struct Accumulate {
  __device__ __forceinline__ T operator()(const T* p, long n) const {
    T s = 0;
    for (long k = 0; k < n; ++k) {
      s += fl::load_global(p, k);
    }
    return s;
  }
};

__device__ float sum_prefix(const float* src, long n) {
  return Accumulate<float>{}(src, n);
}
