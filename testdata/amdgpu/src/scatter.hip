// scatter_rows: out[index[row]] += src[row] for every column; a bad index
// writes outside `out`, at the bottom of a 5-level inline chain
// (apply_update -> combine_row -> store_element -> element_at).
#include "update.h"

FL_NOINLINE float checksum(const float *v, int n) {
  float s = 0;
  for (int i = 0; i < n; i++)
    s += v[i] * (float)(i + 1);
  return s;
}

extern "C" __global__ void scatter_rows(float *out, const float *src,
                                        const int *index, int rows,
                                        int stride, float *sums) {
  long row = block_x();
  int col = thread_x();
  if (row >= rows || col >= stride)
    return;
  scatter::apply_update(out, src, index, row, stride, col);
  if (col == 0)
    sums[row] = checksum(src + row * stride, stride);
}

__global__ void spin(volatile int *flag) {
  while (*flag == 0)
    __builtin_amdgcn_s_sleep(2);
}
