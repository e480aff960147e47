// reraise.c: a SIGSEGV handler in the style of LLVM's SignalHandler: it
// restores SIG_DFL, unblocks the signal and re-raises it with tgkill, so the
// core shows syscall, the handler, <signal handler called>, then the frame
// that faulted (-O0 -g).
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void SignalHandler(int sig) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, sig);
  sigprocmask(SIG_UNBLOCK, &mask, NULL);
  syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

struct tensor {
  float *data;
  int size;
};

__attribute__((noinline)) static float tensor_sum(const struct tensor *t) {
  float s = 0;
  for (int i = 0; i < t->size; i++)
    s += t->data[i];
  return s;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SignalHandler;
  sigaction(SIGSEGV, &sa, NULL);
  struct tensor t = {NULL, 4};
  return (int)tensor_sum(&t);
}
