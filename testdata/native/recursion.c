// recursion.c: unbounded recursion until the 8 MiB stack overflows
// (-O0 -g); each frame is a few hundred bytes, so gdb shows about 30,000
// frames of descend().
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) static int descend(int depth) {
  volatile char pad[240];
  memset((char *)pad, 0, sizeof pad);
  pad[depth % sizeof pad] = 1;
  return descend(depth + 1) + pad[0];
}

int main(void) {
  printf("%d\n", descend(0));
  return 0;
}
