// kinds MODE: one crash per shape of issue 23's "kind, culprit and
// summary" items, each in a function of its own so the culprit can be
// asserted.
//   nullfn            a call through a NULL function pointer (dispatch)
//   dlclose LIB       a call into a library unloaded with dlclose (run_plugin)
//   rodata            a write to a string literal (shout)
//   sse               movapd on an address 8 mod 16 (sum4)
//   avx               vmovapd on an address 16 mod 32 (sum8)
//   seccomp           getppid refused by a SECCOMP_RET_TRAP filter (parent_of_worker)
//   xcpu              a busy loop past RLIMIT_CPU (spin)
//   xfsz              writes past RLIMIT_FSIZE (write_log)
//   return-segv       NULL read; the handler re-raises and returns (read_field)
//   return-altstack   the same with the handler on a sigaltstack
//   return-fpe        division by zero, handler on a sigaltstack (ratio)
//   return-bus        a read past a truncated mmap'd file (first_byte);
//                     "big" as a second argument adds a 64 MiB heap first
//   wildstr           strlen of a wild pointer (item_len, called by process)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <immintrin.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*handler_fn)(int);

struct op {
	const char *name;
	handler_fn run;
};

__attribute__((noinline)) int dispatch(const struct op *o, int arg) {
	return o->run(arg) + 1;
}

__attribute__((noinline)) int run_plugin(handler_fn f, int x) {
	return f(x) + 1;
}

__attribute__((noinline)) void shout(char *s) {
	s[0] = 'H';
}

__attribute__((noinline)) double sum4(const double *p) {
	__m128d v = _mm_load_pd(p);
	v = _mm_add_pd(v, _mm_load_pd(p + 2));
	return _mm_cvtsd_f64(v) + _mm_cvtsd_f64(_mm_unpackhi_pd(v, v));
}

__attribute__((noinline, target("avx"))) double sum8(const double *p) {
	__m256d v = _mm256_load_pd(p);
	v = _mm256_add_pd(v, _mm256_load_pd(p + 4));
	double out[4];
	_mm256_storeu_pd(out, v);
	return out[0] + out[1] + out[2] + out[3];
}

static void deny_getppid(void) {
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

__attribute__((noinline)) long parent_of_worker(void) {
	return syscall(SYS_getppid);
}

__attribute__((noinline)) unsigned long spin(unsigned long n) {
	volatile unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += i;
	return s;
}

__attribute__((noinline)) void write_log(FILE *f) {
	static char block[4096];
	memset(block, 'x', sizeof block);
	for (int i = 0; i < 2048; i++)
		fwrite(block, 1, sizeof block, f);
	fflush(f);
}

// reraise_and_return is the crash handler of libgfortran, Open MPI and R:
// it restores the default action, raises the signal (pending: the handler
// blocks it) and returns, so the signal arrives again at the faulting
// instruction.
static void reraise_and_return(int sig, siginfo_t *info, void *uc) {
	(void)info;
	(void)uc;
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_returning(int sig, int altstack) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = reraise_and_return;
	sa.sa_flags = SA_SIGINFO;
	if (altstack) {
		stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16};
		sigaltstack(&ss, NULL);
		sa.sa_flags |= SA_ONSTACK;
	}
	sigaction(sig, &sa, NULL);
}

__attribute__((noinline)) int read_field(int *p) {
	return p[4] + 1;
}

__attribute__((noinline)) int ratio(int a, int b) {
	return a / b;
}

__attribute__((noinline)) int first_byte(const char *p) {
	return p[8192];
}

struct item {
	const char *name;
	int qty;
};

__attribute__((noinline)) size_t item_len(const struct item *it) {
	return strlen(it->name);
}

__attribute__((noinline)) size_t process(const struct item *items, int n) {
	size_t s = 0;
	for (int i = 0; i < n; i++)
		s += item_len(&items[i]);
	return s;
}

static int bus_error(int big) {
	if (big) {
		char *heap = malloc(64 << 20);
		memset(heap, 1, 64 << 20);
	}
	int fd = open("mapped.bin", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 16384) != 0)
		return 2;
	char *p = mmap(NULL, 16384, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || ftruncate(fd, 4096) != 0)
		return 2;
	install_returning(SIGBUS, 0);
	return first_byte(p);
}

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "nullfn") == 0) {
		struct op o = {"noop", NULL};
		return dispatch(&o, 3);
	}
	if (strcmp(mode, "dlclose") == 0) {
		void *h = dlopen(argc > 2 ? argv[2] : "./libplug.so", RTLD_NOW);
		if (h == NULL)
			return 2;
		handler_fn f = (handler_fn)dlsym(h, "plugin_scale");
		dlclose(h);
		return run_plugin(f, 2);
	}
	if (strcmp(mode, "rodata") == 0) {
		shout((char *)"hello");
		return 0;
	}
	if (strcmp(mode, "sse") == 0) {
		double *buf = aligned_alloc(16, 64);
		for (int i = 0; i < 8; i++)
			buf[i] = i;
		printf("%f\n", sum4(buf + 1));
		return 0;
	}
	if (strcmp(mode, "avx") == 0) {
		double *buf = aligned_alloc(32, 128);
		for (int i = 0; i < 16; i++)
			buf[i] = i;
		printf("%f\n", sum8(buf + 2));
		return 0;
	}
	if (strcmp(mode, "seccomp") == 0) {
		deny_getppid();
		return (int)parent_of_worker();
	}
	if (strcmp(mode, "xcpu") == 0) {
		struct rlimit rl = {1, 2};
		setrlimit(RLIMIT_CPU, &rl);
		return (int)spin(~0UL);
	}
	if (strcmp(mode, "xfsz") == 0) {
		struct rlimit rl = {1 << 22, 1 << 22};
		setrlimit(RLIMIT_FSIZE, &rl);
		write_log(fopen("big.log", "w"));
		return 0;
	}
	if (strcmp(mode, "return-segv") == 0 || strcmp(mode, "return-altstack") == 0) {
		install_returning(SIGSEGV, strcmp(mode, "return-altstack") == 0);
		return read_field(NULL);
	}
	if (strcmp(mode, "return-fpe") == 0) {
		install_returning(SIGFPE, 1);
		return ratio(argc, argc - 2);
	}
	if (strcmp(mode, "wildstr") == 0) {
		struct item items[2] = {{"apple", 1}, {(const char *)(uintptr_t)0x7e5a1234f000ULL, 2}};
		return (int)process(items, 2);
	}
	if (strcmp(mode, "return-bus") == 0)
		return bus_error(argc > 2 && strcmp(argv[2], "big") == 0);
	return 2;
}
