# torch_crash: Debian's python3-torch (libtorch 1.13) sums a tensor made
# from memory that is not mapped; the fault is inside libtorch_cpu, and the
# program's own code is the Python function load_weights.
import ctypes
import numpy as np
import torch

def load_weights(addr, n):
    buf = (ctypes.c_float * n).from_address(addr)
    arr = np.ctypeslib.as_array(buf)
    return torch.from_numpy(arr).sum()

print(load_weights(0x7e5a1234f000, 1 << 16))
