// lock_deadlock.c: two threads take the same two mutexes in opposite orders
// (transfer_in: accounts_lock then journal_lock; flush_journal: journal_lock
// then accounts_lock). A barrier makes sure each holds its first mutex before
// asking for the second, so they always deadlock; gen.sh dumps the stuck
// process with gcore (-O0 -g, 64 KiB thread stacks).
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t accounts_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t journal_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_locked;

__attribute__((noinline)) static void transfer_in(void) {
  pthread_mutex_lock(&accounts_lock);
  pthread_barrier_wait(&both_locked);
  pthread_mutex_lock(&journal_lock);
  pthread_mutex_unlock(&journal_lock);
  pthread_mutex_unlock(&accounts_lock);
}

__attribute__((noinline)) static void flush_journal(void) {
  pthread_mutex_lock(&journal_lock);
  pthread_barrier_wait(&both_locked);
  pthread_mutex_lock(&accounts_lock);
  pthread_mutex_unlock(&accounts_lock);
  pthread_mutex_unlock(&journal_lock);
}

static void *teller(void *arg) {
  (void)arg;
  transfer_in();
  return NULL;
}

static void *auditor(void *arg) {
  (void)arg;
  flush_journal();
  return NULL;
}

int main(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_barrier_init(&both_locked, NULL, 2);
  pthread_t a, b;
  pthread_create(&a, &attr, teller, NULL);
  pthread_create(&b, &attr, auditor, NULL);
  puts("started");
  fflush(stdout);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}
