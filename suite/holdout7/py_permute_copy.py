"""Holdout-7 one-time case (no step markers): per-(batch, head, channel) RMS statistics of activations stored
[B, S, H, D] = [16, 4096, 32, 64] fp16 (268 MB), computed 100 times (a calibration loop). The data set is
first uploaded once from a pageable NumPy array (torch.from_numpy(...).cuda(): one 268 MB pageable copy, tens
of ms: one-time work). Each iteration then does xh = x.permute(0, 2, 1, 3).contiguous() -- a full copy of the
268 MB tensor into [B, H, S, D] (268 MB read + 268 MB written) -- only to take a norm over S, which reads it
once more. The reduction never needed the copy: torch.linalg.vector_norm(x, dim=1) on the original layout
reads 268 MB once. Each iteration moves ~3x the bytes it needs; the copy kernel is most of the GPU time.

Ground truth (steady state): memory / excess_dram_traffic (a .contiguous() copy every iteration that the
consumer does not need). The pageable upload is one-time work to report apart. Fix: reduce over dim=1 of the
original tensor (or keep the data in [B, H, S, D] from the producer): DRAM bytes per iteration 805 MB -> 268 MB.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "onetime"))
import numpy as np  # noqa: E402
import torch  # noqa: E402
from _ot import env_int, whole_program  # noqa: E402

B, S, H, D = 16, 4096, 32, 64
rng = np.random.default_rng(78)
host = rng.standard_normal((B, S, H, D), dtype=np.float32).astype(np.float16)  # pageable, 268 MB

with whole_program():
    x = torch.from_numpy(host).cuda()  # one-time pageable upload
    for _ in range(env_int("REPS", 100)):
        xh = x.permute(0, 2, 1, 3).contiguous()  # [B, H, S, D]: a full 268 MB copy every iteration
        rms = torch.linalg.vector_norm(xh, dim=2)  # [B, H, D] (the RMS is this over sqrt(S))
    torch.cuda.synchronize()
print("permute_copy: done", float(rms[0, 0, 0]))
