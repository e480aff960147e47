// mpirank MODE: an Open MPI rank. "segv" reads through a NULL pointer in
// exchange; "wait" prints "ready PID" and blocks in MPI_Recv until it is
// killed. Open MPI's handler (opal_show_stackframe) prints a backtrace,
// re-raises the signal and returns.
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct halo {
	double *cells;
	int n;
};

__attribute__((noinline)) double exchange(const struct halo *h, int rank) {
	double s = 0;
	for (int i = 0; i < h->n; i++)
		s += h->cells[i] * rank;
	return s;
}

__attribute__((noinline)) double wait_for_halo(void) {
	double x = 0;
	MPI_Status st;
	MPI_Recv(&x, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
	return x;
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc > 1 && strcmp(argv[1], "wait") == 0) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		printf("%f\n", wait_for_halo());
	} else {
		struct halo h = {NULL, 8};
		printf("%f\n", exchange(&h, rank));
	}
	MPI_Finalize();
	return 0;
}
