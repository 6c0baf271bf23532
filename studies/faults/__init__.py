"""Kills, damage and a concurrent sweep against a quick sweep, then what the store holds.

Run from the repository root:

    python -m studies.faults [flags]
"""
