"""What the knee search costs against a grid of the same resolution.

Run from the repository root:

    python -m studies.knee_vs_grid [flags]
"""
