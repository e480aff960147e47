// splitinline: a NULL read three inlined calls deep (load_slot <- sum_chain
// <- tally <- main), built with split DWARF (issue 23 items 1 and 2).
#include <stddef.h>

struct slot { int *value; int scale; };

static inline int load_slot(const struct slot *s)
{
	return *s->value * s->scale;
}

static inline int sum_chain(const struct slot *s, int n)
{
	int t = 0;
	for (int i = 0; i < n; i++)
		t += load_slot(&s[i]) ^ i;
	return t;
}

__attribute__((noinline)) int tally(const struct slot *s, int n)
{
	return sum_chain(s, n) * 3 + n;
}

int main(int argc, char **argv)
{
	(void)argv;
	int a = 1, b = 2;
	struct slot s[3] = {{&a, 2}, {&b, 3}, {argc > 5 ? &a : NULL, 4}};
	return tally(s, 3);
}
