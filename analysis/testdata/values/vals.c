/* A crash with arguments and locals of base, char, pointer (NULL
 * included) and struct pointer types, an unused argument, and an
 * always-inlined helper, for comparing FrameValues with gdb. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	int value;
	struct node *next;
};

static inline __attribute__((always_inline)) int scaled(struct node *n, int scale)
{
	int v = n->value * scale; /* n is NULL: SIGSEGV */
	return v + scale;
}

__attribute__((noinline)) int crash(struct node *n, int depth, char tag, const char *label,
				    unsigned long big, int *nullp, int unused)
{
	int local = depth * 3;
	char c = tag + 1;
	long sum = 0;
	for (int i = 0; i < depth; i++)
		sum += i * label[i % 3];
	short s = (short)(sum & 0x7fff);
	return scaled(n->next, local) + (int)sum + c + s + (int)big + (nullp != NULL);
}

__attribute__((noinline)) int middle(int x, struct node *head)
{
	unsigned char u = (unsigned char)(x + 200);
	int r = crash(head, x + 2, 'A' + x, "abc", 0x123456789UL, NULL, x * 7);
	return r + u + x;
}

int main(int argc, char **argv)
{
	struct node *a = malloc(sizeof *a);
	a->value = 5;
	a->next = NULL;
	int total = middle(argc, a);
	printf("%d %s\n", total, argv[0]);
	return 0;
}
