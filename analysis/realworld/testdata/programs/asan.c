// asan MODE: memory errors AddressSanitizer reports (clang -fsanitize=address,
// run with ASAN_OPTIONS=abort_on_error=1:disable_coredump=0 to get a core).
//   uaf       heap-use-after-free read
//   overflow  heap-buffer-overflow write
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

int main(int argc, char **argv) {
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
