// dlopen_main.c: loads libplugin.so with dlopen (found through the
// executable's $ORIGIN runpath) and calls plugin_run, which crashes inside
// the plugin with a NULL dereference.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*run_fn)(const char *name);

int main(int argc, char **argv) {
  const char *key = argc > 1 ? argv[1] : "depth";
  void *h = dlopen("libplugin.so", RTLD_NOW);
  if (h == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  run_fn run = (run_fn)dlsym(h, "plugin_run");
  if (run == NULL) {
    fprintf(stderr, "dlsym: %s\n", dlerror());
    return 2;
  }
  printf("%s=%d\n", key, run(key));
  return 0;
}
