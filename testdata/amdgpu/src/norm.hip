// A second translation unit: a templated kernel whose reduction inlines
// across access.h, so a host library holds two bundles.
#include "access.h"

template <int Width>
FL_INLINE float row_sum(const float *x, long row, int stride) {
  float s = 0;
#pragma unroll
  for (int i = 0; i < Width; i++)
    s += load_element(x, row, stride, i);
  return s;
}

template <int Width>
__global__ void row_mean(float *out, const float *x, int stride) {
  long row = block_x();
  out[row] = row_sum<Width>(x, row, stride) / Width;
}

template __global__ void row_mean<4>(float *, const float *, int);
template __global__ void row_mean<8>(float *, const float *, int);
