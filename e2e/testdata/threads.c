/* A process of 257 threads: the main thread and 256 workers, worker i
 * parked in one of 16 functions at a recursion depth of i % 7, so the
 * summary has many distinct call paths. Writes "ready" on stdout once all
 * are parked. Built by TestJobSummaryOf256Threads (e2e/job_test.go). */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_barrier_t started;

#define PARK(n)                                                         \
	__attribute__((noinline)) void park_##n(int depth) {            \
		if (depth > 0) {                                        \
			park_##n(depth - 1);                            \
			__asm__ volatile("" ::: "memory");              \
			return;                                         \
		}                                                       \
		pthread_barrier_wait(&started);                         \
		for (;;) pause();                                       \
	}
PARK(0) PARK(1) PARK(2) PARK(3) PARK(4) PARK(5) PARK(6) PARK(7)
PARK(8) PARK(9) PARK(10) PARK(11) PARK(12) PARK(13) PARK(14) PARK(15)

static void (*parks[16])(int) = {park_0, park_1, park_2, park_3, park_4, park_5, park_6, park_7,
	park_8, park_9, park_10, park_11, park_12, park_13, park_14, park_15};

static void *worker(void *arg) {
	long i = (long)arg;
	parks[i % 16]((int)(i % 7));
	return NULL;
}

int main(void) {
	pthread_barrier_init(&started, NULL, 257);
	for (long i = 0; i < 256; i++) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 64 * 1024);
		if (pthread_create(&t, &a, worker, (void *)i) != 0) return 1;
	}
	pthread_barrier_wait(&started);
	printf("ready\n");
	fflush(stdout);
	for (;;) pause();
}
