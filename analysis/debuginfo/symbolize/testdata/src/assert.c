#include <assert.h>
#include <stdio.h>

static inline int check(int x)
{
	assert(x > 5);
	return x * 2;
}

__attribute__((noinline)) int compute(int v)
{
	return check(v) + 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", compute(argc));
	return 0;
}
