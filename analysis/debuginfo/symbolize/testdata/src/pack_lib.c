// pack_lib.c: the second unit of the split DWARF package test.
static inline __attribute__((always_inline)) int first(int *p) {
  return p[0];
}

__attribute__((noinline)) int lib_sum(int *p) {
  return first(p) + 1;
}
