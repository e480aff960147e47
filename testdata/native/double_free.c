// double_free.c: a glibc-detected double free; glibc aborts with
// "free(): double free detected in tcache 2" (-O0 -g).
#include <stdlib.h>
#include <string.h>

struct message {
  char *body;
};

static void message_release(struct message *m) { free(m->body); }

int main(void) {
  struct message m;
  m.body = malloc(32);
  strcpy(m.body, "hello");
  message_release(&m);
  message_release(&m);
  return 0;
}
