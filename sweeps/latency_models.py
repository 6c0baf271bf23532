"""latency_models: exp4c's curves under the reference and the measured latency model (1,800 configs).

The measured model (docs/measured.md) is fitted to seed 000's conditional-write
benchmark: the read is part of the measured op, failed conditional writes
answer later than successful ones, and contention slows conditional requests.
This sweeps exp4c's grid twice, reference (as seed 001) and measured, so the
dashboard's comparison shows both frontiers per provider and the change in
usable throughput (``python -m dashboards compare``).
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # run from a checkout

from ray_jobs import Grid, sweep_main  # noqa: E402
from sweeps.exp4c import GRID as EXP4C  # noqa: E402

GRID = Grid(
    experiment="latency_models",
    description="latency_models: exp4c under the reference and the measured latency model",
    fixed=EXP4C.fixed,
    swept={"latency_model": (None, "measured"), **EXP4C.swept},
    quick=EXP4C.quick,
)

if __name__ == "__main__":
    sys.exit(sweep_main([GRID]))
