"""exp4a_zipf: exp4a with Zipf table choice, alpha 1.5 (240 configs).

P(table of rank k) ~ 1/k^1.5: the rank-1 table takes about half the writes,
as in seed 001's Zipf figures.
"""

import sys

from sweeps.exp4a import GRID as EXP4A
from sweeps.seed001 import ZIPF_ALPHA

GRID = EXP4A.derive(
    "exp4a_zipf",
    description="exp4a_zipf: exp4a with Zipf(1.5) table choice",
    table_distribution="zipf",
    zipf_alpha=ZIPF_ALPHA,
)

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main

    sys.exit(sweep_main([GRID]))
