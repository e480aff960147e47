// Middle levels: functors and templates that wrap the access helpers, as
// CUTLASS/CuTe layers wrap copies.
#pragma once
#include "access.cuh"

namespace fl {

struct Scale {
  float factor;
  __device__ __forceinline__ float operator()(float x) const { return x * factor; }
};

template <typename Op>
struct Gather {
  const float* src;
  const int* index;
  Op op;
  __device__ __forceinline__ float operator()(long i) const {
    long j = load_global(index, i);
    return op(load_global(src, j));
  }
};

template <typename Fn>
__device__ __forceinline__ void for_each_item(float* dst, long n, Fn fn) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) {
    store_global(dst, i, fn(i));
  }
}

}  // namespace fl
