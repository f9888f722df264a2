"""Case: a 'benchmark' of an 8-layer MLP that times 5 steps, the first of
which builds the model lazily: weights created on the CPU and moved to the GPU,
cuBLAS initialized, all inside the measured loop.

Planted bottleneck: the one-time cost of the first step is larger than all the
steady-state steps together; the measurement says nothing about the model's
speed (startup_dominated). Fix: build and warm up before timing, and time
enough steady-state steps.
"""
import torch
from _suite import run

model = None
x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)


def step():
    global model
    if model is None:
        layers = []
        for _ in range(8):
            lin = torch.nn.Linear(4096, 4096)  # initialized on the CPU
            layers += [lin, torch.nn.GELU()]
        model = torch.nn.Sequential(*layers).to("cuda", torch.bfloat16)
    with torch.no_grad():
        return model(x)


run("py_startup", step, default_steps=5, default_warmup=0)
