"""Holdout (issue 9, suite/holdout_onetime.toml): one 1 GiB upload from pageable memory, then 4000 in-place
adds on a 1024-element tensor. No step markers. `--torch-trace PATH` records the whole program."""
import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--torch-trace", default=None)
opts = p.parse_known_args()[0]
prof = None
if opts.torch_trace:
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
    prof.__enter__()
host = torch.rand(256 * 1024 * 1024)  # 1 GiB, pageable
big = host.cuda()
x = torch.zeros(1024, device="cuda")
for _ in range(4000):
    x.add_(1.0)
torch.cuda.synchronize()
print(f"upload_then_tiny_ops: {x[0].item():.0f} {big[0].item():.3f}")
if prof is not None:
    prof.__exit__(None, None, None)
    prof.export_chrome_trace(opts.torch_trace)
