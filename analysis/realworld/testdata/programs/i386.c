/* i386.c: a 32-bit program (gcc -m32) crashed into the i386 cores of
 * analysis/realworld's TestI386Cores, one crash per argument:
 *   null     a NULL read two calls deep (n->next->next on the last node)
 *   abort    abort() from check_range: raise and abort in libc
 *   threads  the NULL read while three threads wait in pause()
 *   handler  a NULL write inside a SIGUSR1 handler that raise() invoked
 *            (installed without SA_SIGINFO: glibc's __restore, a sigframe)
 *   siginfo  the same in a SA_SIGINFO handler (__restore_rt, an rt_sigframe) */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node { int id; struct node *next; };

__attribute__((noinline)) int sum_list(struct node *n)
{
	int s = 0;
	for (; n; n = n->next->next) /* NULL: n->next is NULL on the last node */
		s += n->id;
	return s;
}

__attribute__((noinline)) static void check_range(int lo, int hi)
{
	if (lo > hi)
		abort();
}

static pthread_barrier_t ready;

static void *worker(void *arg)
{
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return arg;
}

__attribute__((noinline)) static void on_signal(int sig)
{
	volatile int *p = NULL;
	*p = sig; /* a fault inside the handler */
}

__attribute__((noinline)) static void on_siginfo(int sig, siginfo_t *info, void *uc)
{
	volatile int *p = NULL;
	*p = sig + info->si_code + (uc != NULL); /* a fault inside the handler */
}

int main(int argc, char **argv)
{
	struct node b = {2, NULL}, a = {1, &b};
	const char *mode = argc > 1 ? argv[1] : "null";
	if (!strcmp(mode, "abort"))
		check_range(5, 3);
	if (!strcmp(mode, "threads")) {
		pthread_t t[3];
		pthread_barrier_init(&ready, NULL, 4);
		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, worker, NULL);
		pthread_barrier_wait(&ready);
	}
	if (!strcmp(mode, "handler")) {
		signal(SIGUSR1, on_signal);
		raise(SIGUSR1);
	}
	if (!strcmp(mode, "siginfo")) {
		struct sigaction sa = {.sa_sigaction = on_siginfo, .sa_flags = SA_SIGINFO};
		sigaction(SIGUSR2, &sa, NULL);
		raise(SIGUSR2);
	}
	return sum_list(a.next);
}
