"""The corrected protocol against the reference's own post-fix figures.

Run from the repository root:

    python -m studies.corrected_reference [flags]
"""
