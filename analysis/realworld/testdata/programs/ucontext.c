/* ucontext.c: a coroutine on a makecontext(3) stack writes through NULL on
 * its third step. argv[1] says where its stack is: "heap" (malloc),
 * "static" (a static array, which an earlier step's frames leave stale
 * return addresses in) or "local" (an array in main's frame, right below
 * main's own return address). The coroutine's stack ends at glibc's
 * __start_context; words above it are not frames. Built and crashed by
 * analysis/realworld (TestUcontextStackEndsAtStartContext). */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

static ucontext_t main_ctx, coro_ctx;
static int *volatile target;
static int slot;

__attribute__((noinline)) static void store(int v) { *target = v; }

__attribute__((noinline)) static void step(int i) { store(i * 2); }

static void coroutine(int n) {
	for (int i = 0; i < n; i++) {
		target = i == 2 ? NULL : &slot;
		step(i);
		swapcontext(&coro_ctx, &main_ctx);
	}
}

int main(int argc, char **argv) {
	static char static_stack[64 * 1024];
	char local_stack[64 * 1024];
	const char *where = argc > 1 ? argv[1] : "heap";
	char *stack = where[0] == 's' ? static_stack : where[0] == 'l' ? local_stack : malloc(sizeof local_stack);
	getcontext(&coro_ctx);
	coro_ctx.uc_stack.ss_sp = stack;
	coro_ctx.uc_stack.ss_size = sizeof local_stack;
	coro_ctx.uc_link = &main_ctx;
	makecontext(&coro_ctx, (void (*)(void))coroutine, 1, 5);
	for (int i = 0; i < 5; i++)
		swapcontext(&main_ctx, &coro_ctx);
	puts("done");
	return 0;
}
