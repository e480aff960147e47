// bigheap: fills 64 MiB of heap, starts two threads that wait, and
// crashes in the main thread: with a small RLIMIT_CORE the kernel cuts the
// core short, and the thread stacks (mapped after the heap) are left out.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *idle(void *arg) {
	(void)arg;
	pause();
	return NULL;
}

__attribute__((noinline)) static void store(int *p, int v) { *p = v; }

int main(void) {
	size_t n = 64 << 20;
	char *heap = malloc(n);
	memset(heap, 7, n);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, idle, NULL);
	usleep(100 * 1000);
	store((int *)8, heap[n - 1]);
	return 0;
}
