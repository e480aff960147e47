// Compiled without -g: gdb names its frame from the symbol table.
extern "C" void symtab_only(int x, void (*cb)(int));

__attribute__((noinline)) void relay(int x, void (*cb)(int))
{
	cb(x);
	asm volatile("" ::: "memory");
}

extern "C" void symtab_only(int x, void (*cb)(int))
{
	relay(x, cb);
	asm volatile("" ::: "memory");
}
