// stack_smash.c: copy_name copies 24 bytes of 'A' into a 16-byte buffer,
// clobbering its caller's saved %rbp (the return address survives). Back in
// main, the next access to a local through %rbp = 0x4141414141414141 faults
// (non-canonical: SIGSEGV, SI_KERNEL), and gdb, following the same frame
// pointer, stops: "Backtrace stopped: Cannot access memory at address ..."
// (-O0 -g -fno-stack-protector).
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) static int copy_name(const char *src, size_t n) {
  char name[16];
  memcpy(name, src, n);
  return name[0];
}

int main(void) {
  char input[24];
  memset(input, 'A', sizeof input);
  int first = copy_name(input, sizeof input);
  printf("%c\n", first);
  return 0;
}
