"""Holdout-7 one-time case (no step markers): a small gating function compiled with torch.compile and then
called 5000 times on a 4096-element tensor. The first call runs Dynamo tracing, Inductor lowering and the
Triton compile of the fused kernel: seconds of one-time work before the first launch. Every call after that
is steady state: Dynamo's guard check and Inductor's Python wrapper, tens of microseconds of host time, to
launch ONE fused Triton kernel that runs for a few microseconds on 16 KB of data. The GPU is idle most of the
steady state, waiting for the host to issue the next launch.

Ground truth (steady state): host / launch_overhead; the compilation is one-time work to report apart, not the
bottleneck (and the kernel itself is not worth profiling). Fix of the steady state: give each call more work
(batch the 5000 calls into one tensor op over [5000, 4096]), or capture the loop in a CUDA graph
(torch.compile(mode="reduce-overhead")) so the host cost per launch disappears.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "onetime"))
import torch  # noqa: E402
from _ot import env_int, whole_program  # noqa: E402


@torch.compile
def gate(x, w):
    return torch.sigmoid(x * w + 0.5) * x


with whole_program():
    torch.manual_seed(77)
    x = torch.randn(4096, device="cuda")
    w = torch.randn(4096, device="cuda")
    for _ in range(env_int("REPS", 5000)):
        y = gate(x, w)
    torch.cuda.synchronize()
print("compile_tiny: done", float(y[0]))
