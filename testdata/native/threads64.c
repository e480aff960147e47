// threads64.c: 64 worker threads parked a few frames deep in four distinct
// call chains (condition wait, nanosleep, and both behind an extra level),
// each on a 64 KiB stack so the core stays small; once all are parked the
// main thread writes through a NULL pointer (-O0 -g).
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NWORKERS 64

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t parked_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t never_cv = PTHREAD_COND_INITIALIZER;
static int parked;

static void announce_parked(void) {
  pthread_mutex_lock(&mu);
  parked++;
  pthread_cond_signal(&parked_cv);
  pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) static void wait_for_work(void) {
  pthread_mutex_lock(&mu);
  parked++;
  pthread_cond_signal(&parked_cv);
  for (;;)
    pthread_cond_wait(&never_cv, &mu);
}

__attribute__((noinline)) static void queue_consumer(int id) {
  (void)id;
  wait_for_work();
}

__attribute__((noinline)) static void idle_sleep(void) {
  struct timespec ts = {3600, 0};
  announce_parked();
  for (;;)
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void heartbeat_loop(int id) {
  (void)id;
  idle_sleep();
}

static void *worker(void *arg) {
  int id = (int)(long)arg;
  char name[16];
  snprintf(name, sizeof name, "worker-%02d", id);
  pthread_setname_np(pthread_self(), name);
  switch (id % 4) {
  case 0: queue_consumer(id); break;
  case 1: wait_for_work(); break;
  case 2: heartbeat_loop(id); break;
  default: idle_sleep(); break;
  }
  return NULL;
}

struct job {
  int *result;
};

__attribute__((noinline)) static void finish_job(struct job *j) { *j->result = 42; }

int main(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  for (long i = 0; i < NWORKERS; i++) {
    pthread_t t;
    if (pthread_create(&t, &attr, worker, (void *)i) != 0) {
      perror("pthread_create");
      return 2;
    }
  }
  pthread_mutex_lock(&mu);
  while (parked < NWORKERS)
    pthread_cond_wait(&parked_cv, &mu);
  pthread_mutex_unlock(&mu);
  // Give the last workers time to get from announce/unlock into their
  // blocking call, so every worker's stack is parked when the core is taken.
  struct timespec settle = {0, 200 * 1000 * 1000};
  nanosleep(&settle, NULL);
  struct job j = {NULL};
  finish_job(&j);
  return 0;
}
