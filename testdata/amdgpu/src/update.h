// Levels 2-3: how one row of the scatter is combined into the output.
#pragma once
#include "access.h"

namespace scatter {

struct AddOp {
  FL_INLINE float operator()(float old, float v) const { return old + v; }
};

template <typename Op>
FL_INLINE void combine_row(float *out, const float *src, long dst_row,
                           long src_row, int stride, int col, Op op) {
  float old = load_element(out, dst_row, stride, col);
  float v = load_element(src, src_row, stride, col);
  store_element(out, dst_row, stride, col, op(old, v));
}

FL_INLINE void apply_update(float *out, const float *src, const int *index,
                            long row, int stride, int col) {
  long dst = index[row];
  combine_row(out, src, dst, row, stride, col, AddOp{});
}

} // namespace scatter
