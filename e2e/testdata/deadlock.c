/* deadlock.c: two threads take two mutexes in opposite orders and block
 * for good; main waits for them. It prints "ready" once both hold their
 * first mutex. The e2e tests run `faultline hang` on it. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t ledger = PTHREAD_MUTEX_INITIALIZER, journal = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;

static void *post_entry(void *arg)
{
	pthread_mutex_lock(&ledger);
	pthread_barrier_wait(&both);
	pthread_mutex_lock(&journal); /* HANG: journal is held by flush_journal */
	return arg;
}

static void *flush_journal(void *arg)
{
	pthread_mutex_lock(&journal);
	pthread_barrier_wait(&both);
	pthread_mutex_lock(&ledger); /* HANG: ledger is held by post_entry */
	return arg;
}

int main(void)
{
	pthread_t a, b;
	pthread_barrier_init(&both, NULL, 3);
	pthread_create(&a, NULL, post_entry, NULL);
	pthread_create(&b, NULL, flush_journal, NULL);
	pthread_barrier_wait(&both);
	printf("ready\n");
	fflush(stdout);
	pthread_join(a, NULL);
	return 0;
}
