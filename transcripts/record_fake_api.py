"""Record a PROTOCOL-FIXTURE transcript: the Claude adapter against the tests' local FAKE Messages API.

NOT a Claude session. The "model" is tests/agent/claude_brains.py's scripted Investigator behind
tests/agent/fake_messages_api.py (a local server enforcing claude-sonnet-5-5's documented request rules); the
transcript shows what the Claude path sends and keeps (verbatim assistant turns, compacted tool results, the
structured-output review, token usage by the fake's tokenizer approximation), on real H200 captures.
Every name in it says so: the model is "fake-messages-api (local protocol fixture, not Claude):claude-sonnet-5-5".

Run from the repository root:  PYTHONPATH=src:. python transcripts/record_fake_api.py
"""
from __future__ import annotations

import sys
from pathlib import Path

from kernel_profiler.agent.models.claude import ClaudeModel
from kernel_profiler.agent.orchestrator import run_ask
from kernel_profiler.engine import analyze

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.agent.claude_brains import Investigator  # noqa: E402
from tests.agent.fake_messages_api import API_KEY, FAKE_LABEL, FakeMessagesAPI  # noqa: E402

CASE, QUESTION = "cu_softmax_naive", "why is my softmax slow?"


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    art = f"tests/data/captures/{CASE}"
    out = root / "transcripts" / f"fake-api-protocol-fixture_{CASE}.jsonl"
    out.unlink(missing_ok=True)
    extra = {"captures": {"paths": [art], "device": analyze([root / art]).device,
                          "note": "real captures from the capture suite, read offline"},
             "model_server": {"kind": "fake", "not_a_claude_session": True,
                              "what": "tests/agent/fake_messages_api.py on 127.0.0.1, replies scripted by "
                                      "tests/agent/claude_brains.py (Investigator); recorded with "
                                      "transcripts/record_fake_api.py"}}
    with FakeMessagesAPI(Investigator(batch=True)) as api:  # kernel_profile and sass in one turn
        model = ClaudeModel(api_key=API_KEY, base_url=api.url, label=FAKE_LABEL)
        r = run_ask(QUESTION, None, [art], "claude", str(out), lambda s: None, root=root, model=model,
                    record_extra=extra)
    assert not api.violations, api.violations
    u = r.usage
    print(f"{out.relative_to(root)}: {'accepted' if r.accepted else 'inconclusive'}; {' -> '.join(r.tool_calls)}; "
          f"input tokens {u.total_input_tokens} (uncached {u.input_tokens}, cache writes "
          f"{u.cache_creation_input_tokens}, cache reads {u.cache_read_input_tokens}), output {u.output_tokens}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
