// sleeper: waits to be signalled. With an argument it first installs a
// handler for the fatal signals that re-raises them the way crash handlers
// do: "siginfo" as LLVM's (SA_SIGINFO), "plain" as CPython's faulthandler
// (no SA_SIGINFO: the kernel leaves no siginfo copy on the signal frame),
// "return" as Open MPI's and R's (SA_SIGINFO; it raises the signal, which
// stays pending while the handler runs, and returns).
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void reraise(int sig) {
	signal(sig, SIG_DFL);
	raise(sig);
}

static void plain_handler(int sig) { reraise(sig); }

static void info_handler(int sig, siginfo_t *info, void *uc) {
	(void)info;
	(void)uc;
	reraise(sig);
}

static void returning_handler(int sig, siginfo_t *info, void *uc) {
	(void)info;
	(void)uc;
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install(const char *mode) {
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT};
	for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		if (strcmp(mode, "return") == 0) {
			sa.sa_sigaction = returning_handler;
			sa.sa_flags = SA_SIGINFO;
		} else if (strcmp(mode, "siginfo") == 0) {
			sa.sa_sigaction = info_handler;
			sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		} else {
			sa.sa_handler = plain_handler;
			sa.sa_flags = SA_NODEFER;
		}
		sigaction(sigs[i], &sa, NULL);
	}
}

static __attribute__((noinline)) void wait_for_work(void) {
	for (;;)
		pause();
}

int main(int argc, char **argv) {
	if (argc > 1)
		install(argv[1]);
	printf("ready\n");
	fflush(stdout);
	wait_for_work();
	return 0;
}
