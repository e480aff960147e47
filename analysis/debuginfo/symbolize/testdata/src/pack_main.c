// pack_main.c and pack_lib.c are two compilation units packed into one
// split DWARF package (dwp_test.go), each with an always_inline accessor.
// They stay small: llvm-dwp up to 16 loops on abbreviations with
// DW_FORM_implicit_const, which gcc emits once several DIEs share one.
int lib_sum(int *p);

static inline __attribute__((always_inline)) int peek(int *p) {
  return p[0];
}

__attribute__((noinline)) int twice(int *p) {
  return peek(p) * 2;
}

int main(void) {
  int v = 3;
  return twice(&v) + lib_sum(&v);
}
