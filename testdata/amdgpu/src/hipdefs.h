// Minimal HIP spellings so the kernels build with Debian's clang and no
// ROCm headers (-nogpuinc -nogpulib): the attributes HIP's headers define.
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define FL_INLINE __device__ __attribute__((always_inline)) inline
#define FL_NOINLINE __device__ __attribute__((noinline))

struct dim3 {
  unsigned x, y, z;
};
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *f, dim3 grid, dim3 block, void **args,
                               unsigned long shmem, hipStream_t stream);

FL_INLINE int thread_x() { return __builtin_amdgcn_workitem_id_x(); }
FL_INLINE int block_x() { return __builtin_amdgcn_workgroup_id_x(); }
