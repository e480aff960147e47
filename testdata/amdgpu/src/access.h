// Level 4-5 of scatter_rows' inline chain: the raw memory accesses.
#pragma once
#include "hipdefs.h"

FL_INLINE float *element_at(float *base, long row, int stride, int col) {
  long off = row * stride + col;
  return base + (off < 0 ? -off : off);
}

FL_INLINE void store_element(float *base, long row, int stride, int col,
                             float v) {
  float *p = element_at(base, row, stride, col);
  *p = v;
}

FL_INLINE float load_element(const float *base, long row, int stride,
                             int col) {
  return base[row * stride + col];
}
