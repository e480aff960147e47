// dwzmain: a NULL read in rec_weight (dwzcommon.h), inlined twice into
// report; built twice (dwzmain and dwzpeer) so dwz moves dwzcommon.h's DIEs
// into a multifile both name with .gnu_debugaltlink.
#include "dwzcommon.h"

__attribute__((noinline)) int report(const struct rec *rs, int n)
{
	return total_weight(rs, n) * 2 + PEER;
}

int main(int argc, char **argv)
{
	(void)argv;
	int a = 3;
	struct rec rs[2] = {{&a, 1}, {argc > 5 ? &a : 0, 2}};
	return report(rs, 2);
}
