/* Tail calls for faultline's call-site tests: main calls enter(), which
   tail-calls one of two relays (chosen at run time), both of which
   tail-call merge(), which tail-calls work(); work() calls fault(),
   which dereferences NULL. gdb's bt shows the tail-call frames it can
   determine unambiguously (DWARF 5 §3.4, DW_TAG_call_site). */
volatile int sink;

__attribute__((noipa)) int fault(int *p) { return *p + sink; }

__attribute__((noipa)) int work(int *p, int n) {
	int r = fault(p);
	return r + n;
}

__attribute__((noipa)) int merge(int *p, int n) {
	sink = n;
	return work(p, n + 1);
}

__attribute__((noipa)) int relay_a(int *p, int n) {
	sink = n;
	return merge(p, n * 2);
}

#ifdef AMBIGUOUS
__attribute__((noipa)) int relay_b(int *p, int n) {
	sink = n + 1;
	return merge(p, n * 3);
}
#endif

__attribute__((noipa)) int enter(int *p, int n) {
#ifdef AMBIGUOUS
	if (sink & 1)
		return relay_b(p, n);
#endif
	sink = n;
	return relay_a(p, n + 2);
}

int main(int argc, char **argv) {
	(void)argv;
	int r = enter(argc > 99 ? (int *)&sink : 0, argc);
	return r + 1;
}
