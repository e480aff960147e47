// noncanonical.c: a read through a non-canonical pointer (a poisoned list
// link); the CPU raises #GP, so the kernel reports SIGSEGV with si_code
// SI_KERNEL and si_addr 0 (-O0 -g).
#include <stdint.h>
#include <stdio.h>

struct entry {
  struct entry *next;
  long key;
};

#define POISON ((struct entry *)(uintptr_t)0xdead000000000000ULL)

__attribute__((noinline)) static long entry_key(const struct entry *e) { return e->next->key; }

int main(void) {
  struct entry e = {POISON, 7};
  e.next = (struct entry *)((char *)POISON + 8);
  printf("%ld\n", entry_key(&e));
  return 0;
}
