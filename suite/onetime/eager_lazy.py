"""One-time case: an eager PyTorch op sequence repeated 20 times; the first iteration pays lazy
module loading (CUDA_MODULE_LOADING=LAZY, the default) for every kernel it uses for the first time.

Ground truth (suite/onetime.toml): the steady state is iterations 2..20, kernel-bound: five
memory-streaming kernels over a 256 MB tensor per iteration, back to back (no host syncs). The
first iteration's extra time is module loading, reported apart. Mechanism of the steady state:
excess_dram_traffic (an unfused chain: each op streams the whole tensor through DRAM). No step markers.
"""
import torch
from _ot import env_int, whole_program

with whole_program():
    x = torch.randn(8192, 8192, device="cuda")
    w = torch.randn(8192, device="cuda")
    for _ in range(env_int("REPS", 20)):
        y = x * w            # mul (broadcast)
        y = y + 1.0          # add
        y = torch.tanh(y)    # tanh
        y = y * x            # mul
        y = torch.relu(y)    # relu
    torch.cuda.synchronize()
print("eager_lazy: done", float(y[0, 0]))
