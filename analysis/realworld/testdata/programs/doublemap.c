// doublemap: maps the C library's file a second time (as ASan's
// symbolizer, gdb's embedded Python or V8 do when they read ELF files),
// then crashes in a qsort comparator, so that libc's frames are on the stack.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int *poison;

static int by_value(const void *a, const void *b) {
	int x = *(const int *)a, y = *(const int *)b;
	if (x == 3)
		return *poison; // NULL: the crash
	return (x > y) - (x < y);
}

int main(int argc, char **argv) {
	const char *lib = argc > 1 ? argv[1] : "/lib/x86_64-linux-gnu/libc.so.6";
	int fd = open(lib, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return 2;
	void *copy = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (copy == MAP_FAILED)
		return 3;
	int v[] = {5, 1, 4, 3, 2, 9, 7};
	qsort(v, sizeof v / sizeof v[0], sizeof v[0], by_value);
	return v[0];
}
