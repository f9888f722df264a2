"""Case: each step uploads a 256 MB batch from host memory and runs a short
kernel on it.

Planted bottleneck (default): the host tensor is pageable, so every `.to('cuda')`
is staged through a bounce buffer at low bandwidth (pageable_transfer).
FIXED=1: the host tensor is pinned and the copy is non_blocking; the step stays
dominated by the upload (transfer_volume), at full link bandwidth.
"""
import os

import torch
from _suite import run

FIXED = os.environ.get("FIXED") == "1"
host = torch.randn(64 * 1024 * 1024)
if FIXED:
    host = host.pin_memory()


def step():
    x = host.to("cuda", non_blocking=FIXED)
    y = x * 2.0
    return y


run("py_pageable_copy", step, default_steps=10)
