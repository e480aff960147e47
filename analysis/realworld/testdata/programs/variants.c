// variants MODE: one program built the ways users build it (-flto -O3,
// -fomit-frame-pointer -fno-asynchronous-unwind-tables, clang and gcc).
//   null      a NULL dereference three calls deep
//   overflow  unbounded recursion in a thread with a 256 KiB stack
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct node {
	int value;
	struct node *next;
};

__attribute__((noinline)) int sum_list(const struct node *n) {
	int s = 0;
	for (; n; n = n->next->next)
		s += n->value;
	return s;
}

__attribute__((noinline)) int checksum(const struct node *head, int rounds) {
	int s = 0;
	for (int i = 0; i < rounds; i++)
		s += sum_list(head) * (i + 1);
	return s;
}

__attribute__((noinline)) int descend(volatile char *prev, int depth) {
	volatile char pad[512];
	pad[0] = (char)depth;
	pad[511] = prev ? prev[0] : 0;
	return descend(pad, depth + 1) + pad[7];
}

static void *overflow(void *arg) {
	(void)arg;
	printf("%d\n", descend(NULL, 0));
	return NULL;
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "overflow") == 0) {
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 256 << 10);
		pthread_t t;
		pthread_create(&t, &a, overflow, NULL);
		pthread_join(t, NULL);
		return 0;
	}
	struct node c = {3, NULL}, b = {2, &c}, a = {1, &b};
	return checksum(&a, argc + 2);
}
