"""The multi-agent layer: tools, sandbox, orchestrator, critic loop, model backends, transcripts."""
