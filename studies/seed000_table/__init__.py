"""Seed 000's cells under the reference and the measured latency model.

Run from the repository root:

    python -m studies.seed000_table [flags]
    python -m studies.seed000_table.failed_ratios [flags]
"""
