"""A job that crashes about one run in four, in two different places.

The run number is kept in the file named by argv[1] (created if missing),
so `faultline run --repeat 20` sees a fixed rate: runs 4, 8, 12, ... crash,
alternately in the C extension and in a C library called through ctypes.
Both crash in code built here (bin/, from src/ by gen.sh), so the signatures
do not depend on the build of Debian's python3.11, _ctypes or libffi."""
import ctypes
import os
import sys

BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")
sys.path.insert(0, BIN)
import crashmod  # noqa: E402


class Batch(ctypes.Structure):
    _fields_ = [("n", ctypes.c_long), ("bytes", ctypes.c_char_p)]


def next_run(path):
    try:
        with open(path) as f:
            n = int(f.read() or 0)
    except FileNotFoundError:
        n = 0
    with open(path, "w") as f:
        f.write(str(n + 1))
    return n + 1


def step(n):
    if n % 8 == 4:
        crashmod.segv(n)  # CRASH A
    elif n % 8 == 0:
        lib = ctypes.CDLL(os.path.join(BIN, "libchecksum.so"))
        lib.checksum(ctypes.byref(Batch(4, None)))  # CRASH B
    return n


if __name__ == "__main__":
    print("run", step(next_run(sys.argv[1])))
