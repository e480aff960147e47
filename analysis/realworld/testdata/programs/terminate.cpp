// terminate MODE: the ways a C++ program ends in std::terminate.
//   thread-throw  an exception escapes a std::thread's function
//   pure-virtual  a pure virtual function called from a base constructor
//   noexcept      an exception thrown through a noexcept function
//   joinable      a std::thread destroyed while still joinable
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

// Outside the anonymous namespace, with two overrides, so that the compiler
// cannot devirtualize the call the base constructor makes.
struct Task {
	Task() { start(); }
	[[gnu::noipa]] void start() { run(); }
	virtual void run() = 0;
	virtual ~Task() = default;
};

struct PrintTask : Task {
	void run() override { std::puts("print"); }
};

struct CountTask : Task {
	int n = 0;
	void run() override { n++; }
};

namespace {

[[gnu::noinline]] void load_shard(int id) {
	if (id >= 0)
		throw std::runtime_error("shard file missing");
}

[[gnu::noinline]] void worker_main(int id) { load_shard(id); }

[[gnu::noinline]] void flush_log(int n) noexcept { load_shard(n); }

void nap() { std::this_thread::sleep_for(std::chrono::seconds(5)); }

[[gnu::noinline]] void spawn_and_forget() { std::thread t(nap); }

} // namespace

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "";
	if (std::strcmp(mode, "thread-throw") == 0) {
		std::thread t(worker_main, 3);
		t.join();
	} else if (std::strcmp(mode, "pure-virtual") == 0) {
		if (argc > 2) {
			CountTask c;
		} else {
			PrintTask p;
		}
	} else if (std::strcmp(mode, "noexcept") == 0) {
		flush_log(argc);
	} else if (std::strcmp(mode, "joinable") == 0) {
		spawn_and_forget();
	}
	return 0;
}
