"""Fit seed 000 on a few client counts, predict the rest.

Run from the repository root:

    python -m studies.holdout [flags]
"""
