/* heldout: the program of bench/heldout's native workloads. Usage:
 *   heldout THREADS SPARSE_GIB
 * starts THREADS threads (64 KiB stacks), thread i parked 1-4 stages deep
 * in libunity.so's template stages (bench/heldout/gen.sh), maps SPARSE_GIB
 * GiB of anonymous memory touching one page per GiB (a sparse core with
 * tens of GB of mapped heap), then crashes: main -> tiny_0 .. tiny_9 ->
 * unity_crash -> Stage<N>::crash, a NULL dereference. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

long unity_entry(long i, int depth);
long tiny_0(long *p, long x);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int parked;

__attribute__((noinline)) void park(long x)
{
	pthread_mutex_lock(&mu);
	parked++;
	pthread_cond_broadcast(&cv);
	while (x != -1)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void *worker(void *arg)
{
	long i = (long)arg;
	return (void *)unity_entry(i, (int)(i % 4));
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	long gib = argc > 2 ? atol(argv[2]) : 0;
	if (gib > 0) {
		char *heap = mmap(NULL, (size_t)gib << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (heap == MAP_FAILED) {
			perror("mmap");
			return 2;
		}
		for (long g = 0; g < gib; g++)
			heap[g << 30] = 1;
	}
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (long i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, worker, (void *)i) != 0) {
			perror("pthread_create");
			return 2;
		}
	}
	pthread_mutex_lock(&mu);
	while (parked < n)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return (int)tiny_0(NULL, 0);
}
