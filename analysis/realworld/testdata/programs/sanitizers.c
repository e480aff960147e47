// sanitizers MODE: what UndefinedBehaviorSanitizer, ThreadSanitizer and
// MemorySanitizer stop a program for, one build each (clang, run with
// abort_on_error=1 to get a core).
//   ubsan  signed integer overflow in add_scores (-fsanitize=undefined
//          -fno-sanitize-recover=undefined)
//   tsan   a thread and main write a counter without a lock (bump); main
//          sleeps so the thread has run, which is no synchronisation
//   msan   a branch on an uninitialised field (is_ready)
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int add_scores(int a, int b) { return a + b; }

static long counter;

__attribute__((noinline)) void bump(void) { counter++; }

static void *worker(void *arg) {
	(void)arg;
	bump();
	return NULL;
}

struct job {
	int ready;
	int id;
};

__attribute__((noinline)) int is_ready(const struct job *j) {
	if (j->ready)
		return 1;
	return 0;
}

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "ubsan") == 0)
		return add_scores(0x7ffffff0, argc * 0x100);
	if (strcmp(mode, "tsan") == 0) {
		pthread_t t;
		pthread_create(&t, NULL, worker, NULL);
		usleep(200000);
		bump();
		pthread_join(t, NULL);
		return (int)counter;
	}
	if (strcmp(mode, "msan") == 0) {
		struct job *j = malloc(sizeof *j);
		j->id = argc;
		return is_ready(j);
	}
	return 2;
}
