// Crash through C++ functions of every naming shape gdb distinguishes.
#include <cstdio>
#include <cstdlib>

extern "C" void symtab_only(int x, void (*cb)(int));

namespace {
__attribute__((noinline)) void helper(int x)
{
	if (x > 0)
		abort();
	std::puts("unreachable");
}
} // namespace

namespace ns {
template <typename T> struct Foo {
	T v;
	__attribute__((noinline)) T get()
	{
		symtab_only(static_cast<int>(v), helper);
		return v;
	}
};
} // namespace ns

struct Client {
	int fd;
	~Client();
};

__attribute__((noinline)) Client::~Client()
{
	ns::Foo<int> f{fd};
	f.get();
}

static inline int inlined_step(int x)
{
	Client c{x};
	return x + 1;
}

__attribute__((noinline)) int run(int x)
{
	return inlined_step(x) * 3;
}

int main(int argc, char **)
{
	auto l = [&](int y) __attribute__((noinline)) { return run(y + argc); };
	return l(1);
}
