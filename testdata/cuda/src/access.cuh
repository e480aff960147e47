// Innermost levels: raw memory access helpers, force-inlined into every caller.
#pragma once

namespace fl {

template <typename T>
__device__ __forceinline__ T load_global(const T* p, long i) {
  return p[i];  // the faulting load when p is bad
}

template <typename T>
__device__ __forceinline__ void store_global(T* p, long i, T v) {
  p[i] = v;
}

}  // namespace fl
