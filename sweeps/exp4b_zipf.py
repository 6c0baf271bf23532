"""exp4b_zipf: exp4b with Zipf table choice, alpha 1.5 (240 configs).

P(table of rank k) ~ 1/k^1.5: the rank-1 table takes about half the writes,
as in seed 001's Zipf figures.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # run from a checkout

from ray_jobs import sweep_main  # noqa: E402
from sweeps.exp4b import GRID as EXP4B  # noqa: E402
from sweeps.seed001 import ZIPF_ALPHA  # noqa: E402

GRID = EXP4B.derive(
    "exp4b_zipf",
    description="exp4b_zipf: exp4b with Zipf(1.5) table choice",
    table_distribution="zipf",
    zipf_alpha=ZIPF_ALPHA,
)

if __name__ == "__main__":
    sys.exit(sweep_main([GRID]))
