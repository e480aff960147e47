// asan MODE: memory errors AddressSanitizer reports (clang -fsanitize=address,
// run with ASAN_OPTIONS=abort_on_error=1:disable_coredump=0 to get a core).
//   uaf       heap-use-after-free read
//   overflow  heap-buffer-overflow write
//   stack     stack-buffer-overflow read (sum_window)
//   global    global-buffer-overflow read (lookup_code)
//   leak      a leak LeakSanitizer reports at exit (run with detect_leaks=1)
#include <stdlib.h>
#include <string.h>

struct request {
	long id;
	long size;
};

__attribute__((noinline)) static long request_size(struct request *r) { return r->size; }

__attribute__((noinline)) static void fill_ids(long *ids, int n) {
	for (int i = 0; i <= n; i++)
		ids[i] = i;
}

__attribute__((noinline)) static long sum_window(int n) {
	volatile long window[4] = {1, 2, 3, 4};
	long s = 0;
	for (int i = 0; i <= n; i++)
		s += window[i];
	return s;
}

static const int codes[5] = {200, 301, 404, 500, 503};

__attribute__((noinline)) static int lookup_code(int i) { return codes[i]; }

static void *keep;

__attribute__((noinline)) static void *make_buffer(size_t n) { return malloc(n); }

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "stack") == 0)
		return (int)sum_window(argc + 2);
	if (argc > 1 && strcmp(argv[1], "global") == 0)
		return lookup_code(argc + 4);
	if (argc > 1 && strcmp(argv[1], "leak") == 0) {
		keep = make_buffer(64);
		keep = make_buffer(128);
		keep = NULL;
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "uaf") == 0) {
		struct request *r = malloc(sizeof *r);
		r->size = 4;
		free(r);
		return (int)request_size(r);
	}
	long *ids = malloc(8 * sizeof *ids);
	fill_ids(ids, 8);
	return (int)ids[0];
}
