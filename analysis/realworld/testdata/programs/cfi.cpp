// cfi MODE: clang -flto -fvisibility=hidden -fsanitize=cfi, in trap mode
// (the default: ud1) or with -fno-sanitize-trap=cfi (UBSan's runtime
// reports and aborts):
//   icall  count_chars(const char *) called as int (*)(int) (run_handler)
//   vcall  a Logger cast to Shape (main)
#include <cstdio>
#include <cstring>

struct Shape { virtual double area() const = 0; virtual ~Shape() {} };
struct Square : Shape { double s; double area() const override { return s * s; } };
struct Logger { virtual void log(const char *m) const { std::puts(m); } virtual ~Logger() {} };

typedef int (*int_handler)(int);
typedef int (*str_handler)(const char *);

__attribute__((noinline)) int count_chars(const char *s) { return (int)std::strlen(s); }

__attribute__((noinline)) int run_handler(int_handler h, int v) { return h(v); }

__attribute__((noinline)) double total_area(const Shape *s) { return s->area(); }

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "";
	if (!std::strcmp(mode, "icall"))
		return run_handler(reinterpret_cast<int_handler>(count_chars), argc);
	if (!std::strcmp(mode, "vcall")) {
		Logger l;
		return (int)total_area(reinterpret_cast<const Shape *>(&l));
	}
	return 0;
}
