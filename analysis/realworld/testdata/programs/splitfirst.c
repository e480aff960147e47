// splitfirst: a translation unit linked before splitinline.c, so that
// splitinline's split unit does not start at offset 0 of the binary's
// .debug_addr and .debug_ranges (DWARF 4: DW_AT_GNU_addr_base and
// DW_AT_GNU_ranges_base are not 0) nor of a .dwp's .debug_rnglists.dwo and
// .debug_loclists.dwo (DWARF 5). Its functions sit in two sections and
// inline a helper, so the unit and its inlined call have range lists.
static inline int scaled(int x, int k)
{
	return x * k + (x >> 2);
}

__attribute__((noinline)) int first_mix(int *v, int n)
{
	int t = 0;
	for (int i = 0; i < n; i++)
		t += scaled(v[i], i + 1) ^ t;
	return t;
}

__attribute__((noinline, section(".text.first_cold"))) int first_cold(int *v, int n)
{
	return first_mix(v, n) + scaled(n, 7);
}
