// jit: threads run code the program wrote into anonymous executable memory,
// as JIT compilers do (no module, no symbols, no CFI): two spin at one
// address, one at another. Then the main thread dereferences NULL.
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static unsigned char *code;

static void *run_jitted(void *offset) {
	void (*fn)(void) = (void (*)(void))(code + (unsigned long)offset);
	fn();
	return NULL;
}

int main(void) {
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memset(code, 0xcc, 4096);
	code[0x100] = 0xeb, code[0x101] = 0xfe; // jmp . (spin)
	code[0x200] = 0xeb, code[0x201] = 0xfe;
	pthread_t t[3];
	pthread_create(&t[0], NULL, run_jitted, (void *)0x100);
	pthread_create(&t[1], NULL, run_jitted, (void *)0x100);
	pthread_create(&t[2], NULL, run_jitted, (void *)0x200);
	usleep(200 * 1000);
	*(volatile int *)code = 0; // fine: writable
	*(volatile int *)16 = 1;   // the crash
	return 0;
}
