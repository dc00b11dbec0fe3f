"""Benchmarks: commands that print measured figures (speed, accuracy, memory).

One module per area with `add_arguments(parser)` and `run(args) -> int`; each prints
human-readable figures and, with --json, one JSON object per figure.
"""
