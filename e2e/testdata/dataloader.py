"""dataloader.py: a PyTorch DataLoader's failure without PyTorch.

A worker process (multiprocessing, fork) segfaults while loading a sample;
like PyTorch's worker SIGSEGV handler it first writes its message with the
C string's terminating NUL byte to stderr. The parent sees the worker die
and exits 1 with DataLoader's RuntimeError, leaving only the worker's core."""
import ctypes
import multiprocessing
import os
import sys


def load_sample(index):
    if index == 3:
        os.write(2, b"ERROR: Unexpected segmentation fault encountered in worker.\n\0")
        return ctypes.string_at(0)  # WORKER CRASH
    return index


def worker_loop(count):
    for i in range(count):
        load_sample(i)


if __name__ == "__main__":
    w = multiprocessing.Process(target=worker_loop, args=(8,))
    w.start()
    w.join()
    if w.exitcode != 0:
        raise RuntimeError(f"DataLoader worker (pid(s) {w.pid}) exited unexpectedly")
    print("epoch done")
