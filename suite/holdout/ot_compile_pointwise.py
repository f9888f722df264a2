"""Holdout (issue 9, suite/holdout_onetime.toml): torch.compile of a pointwise function over 1 GiB, then 30
launches of the compiled kernel. No step markers. `--torch-trace PATH` records the whole program."""
import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--torch-trace", default=None)
opts = p.parse_known_args()[0]
prof = None
if opts.torch_trace:
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
    prof.__enter__()


@torch.compile
def swish_plus_one(x):
    return x * torch.sigmoid(x) + 1.0


x = torch.randn(256 * 1024 * 1024, device="cuda")
for _ in range(30):
    y = swish_plus_one(x)
torch.cuda.synchronize()
print(f"compile_pointwise: {y[12345].item():.4f}")
if prof is not None:
    prof.__exit__(None, None, None)
    prof.export_chrome_trace(opts.torch_trace)
