"""The entry points the CLI calls: `run_ask` and `replay` (both return AskResult)."""
from __future__ import annotations

from .orchestrator import AskResult, replay, run_ask

__all__ = ["AskResult", "run_ask", "replay"]
