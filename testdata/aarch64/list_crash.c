// list_crash walks a linked list from a qsort comparison callback and
// dereferences a NULL next pointer: a SIGSEGV with an inlined frame, a
// function of the program, and glibc's qsort frames between the callback and
// main (CFI unwinding through a library found through link_map).
#include <stdio.h>
#include <stdlib.h>

struct node {
  struct node *next;
  int value;
};

static inline __attribute__((always_inline)) int node_value(const struct node *n) {
  return n->value;
}

__attribute__((noinline)) int sum_list(const struct node *head, int count) {
  int sum = 0;
  for (int i = 0; i < count; i++) {
    sum += node_value(head);
    head = head->next;
  }
  return sum;
}

static struct node tail = {NULL, 3};
static struct node middle = {&tail, 2};
static struct node lists[2] = {{&middle, 1}, {&middle, 5}};

static int by_sum(const void *a, const void *b) {
  const struct node *x = a, *y = b;
  // Four nodes from a three-node list: the fourth is NULL.
  return sum_list(x, 4) - sum_list(y, 4);
}

int main(int argc, char **argv) {
  (void)argv;
  qsort(lists, 2, sizeof lists[0], by_sum);
  printf("%d\n", lists[argc - 1].value);
  return 0;
}
