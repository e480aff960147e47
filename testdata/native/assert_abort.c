// assert_abort.c: abort through a failing assert() (-O0 -g).
#include <assert.h>
#include <stdio.h>

struct buffer {
  int len;
  int cap;
};

static void buffer_append(struct buffer *b, int n) {
  assert(b->len + n <= b->cap && "buffer overflow");
  b->len += n;
}

int main(void) {
  struct buffer b = {0, 16};
  for (int i = 0; i < 4; i++)
    buffer_append(&b, 6);
  printf("%d\n", b.len);
  return 0;
}
