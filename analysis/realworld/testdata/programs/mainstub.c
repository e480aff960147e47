/* mainstub.c: a C program that defines MAIN__, the symbol of a Fortran
 * main program (as R's executable does, a stub for Fortran libraries that
 * reference it), and writes through NULL. Debian's gdb takes MAIN__ for
 * the program's main when a program has that symbol, so its backtrace
 * goes on past C's main to _start. Built by analysis/realworld
 * (TestMAINSymbolIsGDBsMain). */
#include <stddef.h>

void MAIN__(void) {}

__attribute__((noinline)) void crash(int *p) { *p = 1; }

int main(int argc, char **argv) {
	crash(argc > 5 ? (int *)argv : NULL);
	return 0;
}
