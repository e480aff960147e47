// racy_map.cpp: two threads insert into and erase from one std::unordered_map
// with no lock. Sooner or later one of them follows a bucket pointer or a
// node the other has just freed or rehashed: the crash site differs from run
// to run (rehash, bucket walk, malloc's own checks), which is what the
// many-core mode has to recognise as a race. Small 64 KiB thread stacks keep
// the cores small; alarm() ends a run that livelocks in a corrupted chain
// without a core (-O1 -g).
#include <pthread.h>
#include <unistd.h>

#include <unordered_map>

static std::unordered_map<long, long> table;

struct worker_arg {
  long seed;
};

__attribute__((noinline)) static void churn(long seed) {
  unsigned long x = (unsigned long)seed * 2654435761u + 1;
  for (;;) {
    x = x * 6364136223846793005ul + 1442695040888963407ul;
    long key = (long)(x >> 33) % 4096;
    if (x & 0x100)
      table[key] = key;
    else
      table.erase(key);
  }
}

static void *worker(void *p) {
  churn(static_cast<worker_arg *>(p)->seed);
  return nullptr;
}

int main() {
  alarm(10);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  static worker_arg args[2] = {{1}, {2}};
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], &attr, worker, &args[i]);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], nullptr);
  return 0;
}
