// null_inline.cpp: a NULL member read three inlined helpers deep (g++ -O2 -g).
// sum_prefix walks one node too far: the last node's next is NULL, so
// value_of reads NULL->value (address 0x8) inlined into next_value, inlined
// into add_next, inlined into sum_prefix. value_of multiplies two fields so
// that the faulting load stays a separate instruction inside value_of's
// inlined range instead of being folded into add_next's add.
#include <cstdio>
#include <cstdlib>

struct Node {
  Node *next;
  int value;
  int weight;
};

static inline int value_of(const Node *n) { return n->value * n->weight; }

static inline int next_value(const Node *n) { return value_of(n->next); }

static inline long add_next(long sum, const Node *n) { return sum + next_value(n); }

__attribute__((noinline)) long sum_prefix(const Node *head, int count) {
  long sum = 0;
  for (const Node *n = head; n != nullptr && count-- > 0; n = n->next)
    sum = add_next(sum, n);
  return sum;
}

int main(int argc, char **argv) {
  Node *c = new Node{nullptr, 3, 1};
  Node *b = new Node{c, 2, 1};
  Node *a = new Node{b, 1, 1};
  int count = argc > 1 ? std::atoi(argv[1]) : 3;
  std::printf("sum=%ld\n", sum_prefix(a, count));
  return 0;
}
