/* stuck.c: a hung multi-threaded program for `faultline hang`: two workers
 * wait forever on a condition nobody signals, one sleeps in a loop, main
 * joins them. It prints "ready" once every worker has started waiting. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_cond_t started = PTHREAD_COND_INITIALIZER;
static int waiting;

__attribute__((noinline)) static void wait_for_work(void)
{
	pthread_mutex_lock(&mu);
	waiting++;
	pthread_cond_signal(&started);
	for (;;)
		pthread_cond_wait(&never, &mu); /* STUCK WAIT */
}

static void *waiter(void *arg)
{
	(void)arg;
	wait_for_work();
	return NULL;
}

__attribute__((noinline)) static void poll_forever(void)
{
	pthread_mutex_lock(&mu);
	waiting++;
	pthread_cond_signal(&started);
	pthread_mutex_unlock(&mu);
	for (;;)
		sleep(1); /* STUCK SLEEP */
}

static void *sleeper(void *arg)
{
	(void)arg;
	poll_forever();
	return NULL;
}

int main(void)
{
	pthread_t t[3];
	pthread_create(&t[0], NULL, waiter, NULL);
	pthread_create(&t[1], NULL, waiter, NULL);
	pthread_create(&t[2], NULL, sleeper, NULL);
	pthread_mutex_lock(&mu);
	while (waiting < 3)
		pthread_cond_wait(&started, &mu);
	pthread_mutex_unlock(&mu);
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL); /* STUCK JOIN */
	return 0;
}
