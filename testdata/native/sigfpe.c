// sigfpe.c: integer division by zero (SIGFPE, FPE_INTDIV) (-O0 -g).
#include <stdio.h>

__attribute__((noinline)) static int average(int total, int count) { return total / count; }

int main(int argc, char **argv) {
  (void)argv;
  printf("%d\n", average(100, argc - 1));
  return 0;
}
