"""Regenerate the offline-expert transcripts in this folder from the real H200 captures in tests/data.

Run from the repository root:  python transcripts/record.py
Each transcript is replayed by tests/agent/test_transcripts.py (no GPU, no profilers, no network).
"""
from __future__ import annotations

import sys
from pathlib import Path

from kernel_profiler.agent.orchestrator import run_ask
from kernel_profiler.engine import analyze

CASES = {
    "cu_softmax_naive": "why is my softmax slow?",
    "cu_tiny_launches": "why does my update loop leave the GPU idle?",
    "py_unfused_gelu": "why is my GELU slow in PyTorch?",
    "cu_cublas_bf16": "can my bf16 GEMM go faster?",
    "cu_transpose_conflict": "why is my transpose slow?",
    "py_item_sync": "why is my training step slow?",
}


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    for case, question in CASES.items():
        art = f"tests/data/captures/{case}"
        out = root / "transcripts" / f"expert_{case}.jsonl"
        device = analyze([root / art]).device  # the GPU the captures were made on (from the nsys export)
        extra = {"captures": {"paths": [art], "device": device,
                              "note": "real captures from the capture suite; this transcript was recorded offline"}}
        r = run_ask(question, None, [art], "expert", str(out), lambda s: None, root=root, record_extra=extra)
        print(f"{out.relative_to(root)}: {'accepted' if r.accepted else 'inconclusive'}; {' -> '.join(r.tool_calls)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
