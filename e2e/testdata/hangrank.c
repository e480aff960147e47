/* A rank of a job that hangs: every rank waits in collective_wait() for a
 * message that never comes, except rank 2, stuck in compute_stuck(). Each
 * rank writes ready.RANK into its working directory once it is blocked.
 * Built and run by the Slurm test (e2e/job_test.go). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void mark_ready(int rank) {
	char name[64];
	snprintf(name, sizeof name, "ready.%d", rank);
	FILE *f = fopen(name, "w");
	if (f) fclose(f);
}

__attribute__((noinline)) void collective_wait(int rank) {
	mark_ready(rank);
	for (;;) poll(NULL, 0, -1);
}

__attribute__((noinline)) void compute_stuck(int rank) {
	mark_ready(rank);
	struct timespec ts = {1, 0};
	for (;;) nanosleep(&ts, NULL);
}

int main(void) {
	const char *r = getenv("SLURM_PROCID");
	int rank = r ? atoi(r) : 0;
	if (rank == 2)
		compute_stuck(rank);
	else
		collective_wait(rank);
	return 0;
}
