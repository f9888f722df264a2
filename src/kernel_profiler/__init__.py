"""kernel-profiler: what limits this kernel or program's GPU time, and what to change."""

__version__ = "0.1.0"
