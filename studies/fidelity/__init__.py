"""Simcore against the reference simulator (cdouglas/endive) on the same configs and seeds.

Run from the repository root:

    python -m studies.fidelity [flags]
"""
