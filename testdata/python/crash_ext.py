"""A training-loop-shaped job that crashes in a C extension from a worker
thread, through a Python callback called from C (crashmod.call)."""
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin"))
import crashmod  # noqa: E402


def load_batches(stop):
    while not stop.wait(0.05):
        pass


def compute(n):
    return crashmod.segv(n)  # CRASH: the call that faults


def train_step(n):
    return crashmod.call(lambda: compute(n))


def trainer(stop, ready):
    ready.wait()
    train_step(4)
    stop.set()


def main():
    stop, ready = threading.Event(), threading.Event()
    loaders = [threading.Thread(target=load_batches, args=(stop,), name=f"loader-{i}") for i in range(2)]
    t = threading.Thread(target=trainer, args=(stop, ready), name="trainer")
    for th in loaders + [t]:
        th.start()
    ready.set()
    t.join()


if __name__ == "__main__":
    main()
