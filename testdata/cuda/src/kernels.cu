// Test kernels for faultline's cubin reader: a deep __forceinline__ chain
// across headers, templates and functors; a noinline helper; a spinning kernel.
#include "functors.cuh"

__device__ __noinline__ float checksum(const float* p, int n) {
  float s = 0;
  for (int k = 0; k < n; ++k) {
    s += fl::load_global(p, k);
  }
  return s;
}

template <typename Op>
__device__ __forceinline__ void gather_rows(float* dst, const float* src, const int* index, long n, Op op) {
  fl::Gather<Op> g{src, index, op};
  fl::for_each_item(dst, n, g);
}

extern "C" __global__ void crash_kernel(float* dst, const float* src, const int* index, long n, float f) {
  gather_rows(dst, src, index, n, fl::Scale{f});
  if (threadIdx.x == 0 && n < 0) {
    dst[0] = checksum(src, (int)-n);
  }
}

__global__ void scale_kernel(float* dst, const float* src, long n, float f) {
  fl::Scale s{f};
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) {
    fl::store_global(dst, i, s(fl::load_global(src, i)));
  }
}

__device__ __forceinline__ bool keep_waiting(volatile const int* flag) {
  return *flag == 0;
}

extern "C" __global__ void spin_kernel(volatile int* flag, int* out) {
  long spins = 0;
  while (keep_waiting(flag)) {
    ++spins;
  }
  out[threadIdx.x] = (int)spins;
}
