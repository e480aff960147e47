// cxxchecks MODE: the C++ standard library's own checks and a destructor
// that throws. Built with -D_GLIBCXX_ASSERTIONS or -D_GLIBCXX_DEBUG:
//   index  vector::operator[] past the end (Shard::row)
//   dtor   Journal::~Journal calls flush(), which throws: destructors are
//          noexcept, so the exception reaches std::terminate although
//          main catches everything
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>
#include <string>

struct Shard {
	std::vector<int> rows;
	__attribute__((noinline)) int row(size_t i) const { return rows[i]; }
};

struct Journal {
	std::string path;
	__attribute__((noinline)) void flush() { throw std::runtime_error("journal flush failed: " + path); }
	~Journal() { flush(); }
};

__attribute__((noinline)) void close_journal() {
	Journal j{"/var/log/app.journal"};
}

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "index")) {
		Shard s{{1, 2, 3}};
		return s.row(argc + 5);
	}
	if (!strcmp(mode, "dtor")) {
		try { close_journal(); } catch (...) { return 1; }
	}
	return 0;
}
