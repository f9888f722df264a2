"""Renderers of an answer: Markdown/text and the self-contained HTML report."""
