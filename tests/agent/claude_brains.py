"""Scripted "brains" for the fake Messages API (tests/agent/fake_messages_api.py): functions from a request to a
reply that drive a whole `ask` the way an investigating model would, reading only what the request carries (the
compacted tool results). They are test fixtures, not Claude."""
from __future__ import annotations

import json
from typing import Optional

from kernel_profiler.kernel_name import KernelName

from .fake_messages_api import Request, reply, text, thinking, tool


def _json(s: str) -> dict:
    try:
        v = json.loads(s)
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def answer_from_finding(f: dict) -> dict:
    """submit_answer input copied from a finding as the model read it (numbers as shown, sources named)."""
    ev = [e for e in f.get("evidence", []) if isinstance(e, dict)]
    fix = f.get("fix") if isinstance(f.get("fix"), dict) else {}
    return {
        "bottleneck": f["bottleneck"],
        "evidence": [{"metric": e.get("metric"), "value": e["value"], "unit": e.get("unit"),
                      "artifact": e.get("artifact"), "meaning": e.get("meaning", "")} for e in ev[:3]],
        "explanation": f.get("explanation", ""),
        "fix": {"change": fix.get("change", ""), "metric": fix.get("metric"), "direction": fix.get("direction"),
                "expected": fix.get("expected", "")} if fix else None,
        "bound": f.get("bound"), "mechanism": f.get("mechanism"), "kernel": f.get("kernel"),
    }


class Investigator:
    """timeline -> kernel_profile (the dominant kernel) -> sass -> submit_answer (copied from the kernel's finding)
    -> the review's verdicts in order. `spoil_first` spoils the first submission's numbers (a rejection the captures
    contradict); `unsure_first` leaves its fix without metric and direction (a rejection the checks cannot confirm);
    `batch` calls kernel_profile and sass in one turn (several tool_use blocks)."""

    def __init__(self, reviews: Optional[list[dict]] = None, spoil_first: bool = False, batch: bool = False,
                 unsure_first: bool = False):
        self.reviews = list(reviews or [{"verdict": "accept", "reasons": []}])
        self.spoil_first = spoil_first
        self.unsure_first = unsure_first
        self.batch = batch
        self.submissions = 0
        self.review_prompts: list[str] = []
        self.errors: list[dict] = []  # tool errors it read

    def __call__(self, req: Request):
        if req.structured is not None:
            self.review_prompts.append(req.user_text())
            return reply(text(json.dumps(self.reviews.pop(0))))
        results = req.all_tool_results()
        if not results:
            return reply(thinking("Timeline first: is the GPU even busy?"), tool("timeline", {}))
        by = {}
        for r in results:
            if not r["is_error"]:
                by[r["name"]] = _json(r["content"])
        last = req.tool_results()[-1] if req.tool_results() else results[-1]
        tl = by.get("timeline", {})
        if last["name"] == "kernel_profile" and last["is_error"]:  # e.g. no counter access: answer from the timeline
            self.errors.append(_json(last["content"]))
            return self._submit(answer_from_finding(tl["findings"][0]))
        if last["name"] == "timeline" or ("kernel_profile" not in by and tl):
            if tl.get("verdict") != "kernel":
                return self._submit(answer_from_finding(tl["findings"][0]))
            rx = KernelName(tl["dominant_kernels"][0]["name"]).base
            calls = [tool("kernel_profile", {"kernel_regex": rx})]
            if self.batch:
                calls.append(tool("sass", {"kernel_regex": rx}))
            return reply(thinking("Kernel-bound: profile the dominant kernel."), text("Profiling " + rx + "."),
                         *calls)
        kp = by.get("kernel_profile", {})
        rx = KernelName(kp["kernels"][0]["name"]).base
        if "sass" not in by and not self.batch:
            return reply(thinking("Confirm the mechanism in SASS."), tool("sass", {"kernel_regex": rx}))
        return self._submit(answer_from_finding(kp["kernels"][0]["findings"][0]))

    def _submit(self, ans: dict):
        self.submissions += 1
        if self.spoil_first and self.submissions == 1:
            ans = {**ans, "evidence": [{**e, "value": e["value"] * 7.3} for e in ans["evidence"]]}
        if self.unsure_first and self.submissions == 1 and ans.get("fix"):
            ans = {**ans, "fix": {**ans["fix"], "metric": None, "direction": None, "expected": "",
                                  "change": ans["fix"]["change"].split(".")[0] + "."}}
        return reply(thinking("Submit the four parts."), tool("submit_answer", ans))
