// A C++ crash in a member function called through an inlined helper, with
// a bool and a double, for comparing FrameValues with gdb.
#include <cstdio>

struct Counter {
	int count;
	int *slots;

	__attribute__((noinline)) int bump(int by, bool twice, double ratio)
	{
		int before = count;
		count += by;
		if (twice)
			count += by;
		return store(before + (int)ratio);
	}

	inline __attribute__((always_inline)) int store(int v)
	{
		slots[v % 4] = v; // slots is NULL: SIGSEGV
		return v;
	}
};

int main(int argc, char **)
{
	Counter c{argc, nullptr};
	int r = c.bump(argc + 1, argc > 0, 2.5);
	std::printf("%d\n", r);
	return 0;
}
