// plug: the library kinds.c loads, takes a function of and unloads.
int plugin_scale(int x) { return x * 3; }
