// nostdlib: a program without the C runtime (gcc -nostdlib -static), whose
// _start is the outermost frame. Built with -DIN_START it faults in _start
// itself, else in a function _start calls.
static volatile int *target = (int *)8;

__attribute__((noinline)) static void poke(int v) { *target = v; }

void _start(void) {
#ifdef IN_START
	*target = 2;
#else
	poke(1);
#endif
	for (;;)
		;
}
