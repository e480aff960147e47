/* A rank of a job where two ranks crash differently: rank 1 writes through
 * a null pointer in write_result(), rank 2 aborts in check_invariant(); the
 * others finish. Built and run by the Slurm test (e2e/job_test.go). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void write_result(int *out, int v) { *out = v; }

__attribute__((noinline)) void check_invariant(int ok) {
	if (!ok) {
		fprintf(stderr, "invariant broken\n");
		abort();
	}
}

int main(void) {
	const char *r = getenv("SLURM_PROCID");
	int rank = r ? atoi(r) : 0;
	volatile int *nowhere = NULL;
	if (rank == 1)
		write_result((int *)nowhere, rank);
	if (rank == 2)
		check_invariant(0);
	return 0;
}
