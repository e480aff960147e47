# torchbackward.py DIR: Debian's python3 with python3-torch and
# python3-numpy; a custom autograd Function whose backward maps numpy's
# frompyfunc ufunc over the gradient with the crashext C extension (from
# DIR; bench/heldout/crashext.c), which faults on a NULL pointer. The
# crashing stack runs crashext -> CPython -> numpy's _multiarray_umath ->
# CPython -> libtorch_python (PyNode::apply) -> libtorch_cpu's autograd
# engine (Engine::evaluate_function) -> libtorch_python -> CPython.
import sys

import numpy as np
import torch

sys.path.insert(0, sys.argv[1])
import crashext  # noqa: E402


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        g = grad.detach().numpy()
        out = np.frompyfunc(crashext.scale, 1, 1)(g)
        return torch.from_numpy(out.astype(np.float32))


x = torch.randn(8, requires_grad=True)
Scale.apply(x).sum().backward()
