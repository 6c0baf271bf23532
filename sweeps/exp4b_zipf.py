"""exp4b_zipf: exp4b with Zipf table choice, alpha 1.5 (240 configs).

P(table of rank k) ~ 1/k^1.5: the rank-1 table takes about half the writes,
as in seed 001's Zipf figures.
"""

import sys

from sweeps.exp4b import GRID as EXP4B
from sweeps.seed001 import ZIPF_ALPHA

GRID = EXP4B.derive(
    "exp4b_zipf",
    description="exp4b_zipf: exp4b with Zipf(1.5) table choice",
    table_distribution="zipf",
    zipf_alpha=ZIPF_ALPHA,
)

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main

    sys.exit(sweep_main([GRID]))
