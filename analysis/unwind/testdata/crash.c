/* Crash programs for the unwinder's tests: each mode ends in a core dump.
   Build: gcc -g [-O0|-O2 [-fomit-frame-pointer]] -pthread crash.c */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void sink(volatile void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

NOINLINE void leaf_segv(int *p) { sink(p); *p = 42; sink(p); }
NOINLINE void middle(int *p) { volatile int x = 1; leaf_segv(p); sink(&x); }
NOINLINE void outer(int *p) { volatile int y = 2; middle(p); sink(&y); }

NOINLINE int recurse(int n) {
	volatile char buf[8];
	buf[0] = (char)n;
	sink(buf);
	if (n == 0) {
		leaf_segv(NULL);
		return 0;
	}
	int r = recurse(n - 1);
	sink(buf);
	return r + buf[0];
}

typedef void (*fn_t)(void);
fn_t volatile null_fn;
NOINLINE void call_null(void) { null_fn(); sink(0); }

static void abort_handler(int sig) { (void)sig; abort(); }
static void crash_handler(int sig) { (void)sig; leaf_segv(NULL); }

NOINLINE void raise_usr1(void) { raise(SIGUSR1); sink(0); }

static void *worker(void *arg) {
	volatile int z = 3;
	outer((int *)arg);
	sink(&z);
	return NULL;
}
static void *sleeper(void *arg) { (void)arg; for (;;) pause(); return NULL; }

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "segv";
	if (!strcmp(mode, "segv")) {
		outer(NULL);
	} else if (!strcmp(mode, "recurse")) {
		recurse(30000);
	} else if (!strcmp(mode, "nullcall")) {
		call_null();
	} else if (!strcmp(mode, "abort")) {
		signal(SIGSEGV, abort_handler);
		outer(NULL);
	} else if (!strcmp(mode, "handler")) {
		signal(SIGUSR1, crash_handler);
		raise_usr1();
	} else if (!strcmp(mode, "thread")) {
		pthread_t a, b;
		pthread_create(&b, NULL, sleeper, NULL);
		sleep(0);
		pthread_create(&a, NULL, worker, NULL);
		pthread_join(a, NULL);
	}
	return 0;
}
