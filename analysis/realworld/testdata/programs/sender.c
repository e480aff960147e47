// sender MODE PID SIG: sends SIG to PID with kill(2) (SI_USER), tgkill(2)
// (SI_TKILL) or sigqueue(3) (SI_QUEUE).
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc != 4)
		return 2;
	pid_t pid = atoi(argv[2]);
	int sig = atoi(argv[3]);
	int rc;
	if (strcmp(argv[1], "kill") == 0)
		rc = kill(pid, sig);
	else if (strcmp(argv[1], "tgkill") == 0)
		rc = syscall(SYS_tgkill, pid, pid, sig);
	else {
		union sigval v = {.sival_int = 7};
		rc = sigqueue(pid, sig, v);
	}
	if (rc != 0) {
		perror("send");
		return 1;
	}
	return 0;
}
