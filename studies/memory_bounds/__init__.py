"""What one run costs in memory, against simcore.bounds' estimate.

Run from the repository root:

    python -m studies.memory_bounds [flags]
"""
