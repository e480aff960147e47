// plugin.c: libplugin.so, loaded with dlopen by dlopen_main.c (-O1 -g).
// plugin_run looks up a setting that is not there and dereferences the
// NULL result. The shipped library is stripped; its DWARF lives in
// .debug/libplugin.so.debug, found through .gnu_debuglink.
#include <stddef.h>
#include <string.h>

struct setting {
  const char *name;
  int value;
};

static struct setting settings[] = {
    {"width", 640},
    {"height", 480},
};

__attribute__((noinline)) struct setting *plugin_lookup(const char *name) {
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
    if (strcmp(settings[i].name, name) == 0)
      return &settings[i];
  return NULL;
}

int plugin_run(const char *name) {
  struct setting *s = plugin_lookup(name);
  return s->value * 2;
}
