# torchcrash.py: import torch (Debian's python3-torch), run a small model's
# forward pass, then crash in the crashext C extension called from a torch
# op: Tensor.apply_ calls the extension's function for each element.
import sys
import threading

import torch

sys.path.insert(0, sys.argv[1])
import crashext  # noqa: E402

model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
with torch.no_grad():
    out = model(torch.randn(8, 64))
torch.set_num_threads(4)
_ = torch.mm(torch.randn(256, 256), torch.randn(256, 256))  # start the intra-op pool
ready = threading.Event()
threading.Thread(target=lambda: (ready.set(), threading.Event().wait()), daemon=True).start()
ready.wait()
out.detach().apply_(crashext.scale)
