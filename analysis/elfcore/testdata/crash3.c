/* crash3: three threads; the third writes to FAULT_ADDR and dies with
 * SIGSEGV (SEGV_MAPERR). Used by the elfcore tests to produce a real core. */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#define FAULT_ADDR 0xdead0UL

volatile uint64_t faultline_marker = 0x1122334455667788ULL;
static pthread_barrier_t barrier;

static void *idle_thread(void *arg) {
	(void)arg;
	pthread_barrier_wait(&barrier);
	for (;;)
		pause();
	return 0;
}

static void *crash_thread(void *arg) {
	(void)arg;
	pthread_barrier_wait(&barrier);
	usleep(200000); /* let the other threads park in pause() */
	*(volatile int *)FAULT_ADDR = 42;
	return 0;
}

int main(void) {
	pthread_t t[2];
	pthread_barrier_init(&barrier, 0, 3);
	pthread_create(&t[0], 0, idle_thread, 0);
	pthread_create(&t[1], 0, crash_thread, 0);
	pthread_barrier_wait(&barrier);
	for (;;)
		pause();
}
