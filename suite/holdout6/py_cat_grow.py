"""Holdout-6 case: a decode loop that grows its KV cache with torch.cat. Each step appends one token to the
keys and values of 8 layers (per layer two bf16 caches of [256 heads x batch, ~4096 tokens, 128] = 256 MB each)
with k = torch.cat([k, k_new], dim=1): every append allocates a new tensor and copies the WHOLE cache, 4 GiB
read + 4 GiB written per step, while the attention that actually needs the cache (q @ k^T, softmax, @ v for
one query token) reads it once (4 GiB). Two thirds of the DRAM traffic of each step is the re-copy of data that
did not change; the copy kernels themselves stream at full speed, so no single kernel looks slow.

Ground truth: memory / excess_dram_traffic (the cat re-copies the cache every step). Fix: preallocate the cache
for the maximum length and write the new token in place (k_cache[:, t] = k_new, or index_copy_): the per-step
traffic drops to the attention's one read, ~3x less.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import torch  # noqa: E402
from _suite import run  # noqa: E402

torch.manual_seed(67)
LAYERS, BH, T0, D = 8, 256, 4096, 128
dt = torch.bfloat16
ks = [torch.randn(BH, T0, D, device="cuda", dtype=dt) for _ in range(LAYERS)]
vs = [torch.randn(BH, T0, D, device="cuda", dtype=dt) for _ in range(LAYERS)]
q = torch.randn(BH, 1, D, device="cuda", dtype=dt)


def step():
    global q
    for i in range(LAYERS):
        k_new = q * 0.5
        v_new = q * 0.25
        ks[i] = torch.cat([ks[i], k_new], dim=1)  # copies the whole cache to append one token
        vs[i] = torch.cat([vs[i], v_new], dim=1)
        s = torch.softmax((q @ ks[i].transpose(1, 2)) * D ** -0.5, dim=-1)
        q = s @ vs[i]


run("py_cat_grow", step, default_steps=10)
