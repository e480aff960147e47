// layers crashes four calls deep with an inlined accessor on top: the same
// source is built plainly, stripped with a separate debug file (served by
// debuginfod), with split DWARF (.dwo and .dwp), and with MiniDebugInfo
// (.gnu_debugdata), and each build's core must symbolize to the same frames.
#include <stdio.h>
#include <stdlib.h>

struct config {
  const char *name;
  int *limits;
};

static inline __attribute__((always_inline)) int first_limit(const struct config *c) {
  return c->limits[0];
}

__attribute__((noinline)) static int check_config(const struct config *c) {
  int limit = first_limit(c);
  return limit > 10 ? limit : 10;
}

__attribute__((noinline)) int load_config(const char *name) {
  struct config c = {name, NULL};
  if (name[0] == '-')
    c.limits = malloc(sizeof(int));
  return check_config(&c) + 1;
}

__attribute__((noinline)) static int start(int argc, char **argv) {
  return load_config(argc > 1 ? argv[1] : "default") * 2;
}

int main(int argc, char **argv) {
  printf("%d\n", start(argc, argv));
  return 0;
}
