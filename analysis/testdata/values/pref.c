// pref: a crash in a function gcc -O2 specialised for a constant argument
// (IPA-CP: crunch.constprop.0): the removed argument's value is described
// with DW_OP_GNU_parameter_ref (issue 23 item 4).
#include <stdio.h>
#include <stdlib.h>

struct cell { int *slot; };

static __attribute__((noinline)) int crunch(struct cell *c, int scale, int bias)
{
	int v = *c->slot * scale;
	if (v > 1000)
		printf("big %d\n", v);
	return v + bias;
}

int main(int argc, char **argv)
{
	struct cell good = {&argc}, bad = {NULL};
	int r = crunch(&good, 7, argc);
	r += crunch(argc > 5 ? &good : &bad, 7, argc + 1);
	return r;
}
