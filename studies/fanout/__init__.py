"""What the Ray fan-out costs, and where a whole sweep's time goes.

Run from the repository root:

    python -m studies.fanout [flags]
"""
