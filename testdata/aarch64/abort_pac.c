// abort_pac aborts three calls deep in a program built with
// -mbranch-protection=pac-ret: every saved return address on the stack is
// signed, and the unwinder must strip the pointer-authentication code. The
// abort goes through glibc's raise and pthread_kill (SIGABRT from a thread's
// own tgkill).
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void check_invariant(int v) {
  if (v != 42) {
    fprintf(stderr, "invariant violated: %d\n", v);
    abort();
  }
}

__attribute__((noinline)) int process(int v) {
  check_invariant(v);
  return v * 2;
}

__attribute__((noinline)) int run(int argc) {
  return process(argc + 1) + 1;
}

int main(int argc, char **argv) {
  (void)argv;
  return run(argc);
}
