"""Seed 001's published figures against each of the reference's metric definitions.

Run from the repository root:

    python -m studies.published_repro [flags]
    python -m studies.published_repro.published_vs_reference [flags]
"""
