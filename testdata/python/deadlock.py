"""Two threads taking two locks in opposite orders: a lock-order deadlock.
Each prints what it holds, then blocks forever on the other lock."""
import sys
import threading

a, b = threading.Lock(), threading.Lock()
both = threading.Barrier(2)


def transfer_ab():
    with a:
        print("transfer_ab holds a", flush=True)
        both.wait()
        with b:  # DEADLOCK A: waits for b
            pass


def transfer_ba():
    with b:
        print("transfer_ba holds b", flush=True)
        both.wait()
        with a:  # DEADLOCK B: waits for a
            pass


if __name__ == "__main__":
    ts = [threading.Thread(target=transfer_ab, name="ab"), threading.Thread(target=transfer_ba, name="ba")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    sys.exit("unreachable: the threads finished")
