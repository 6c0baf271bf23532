"""Every experiment the sweeps declare, by name: the one list the command line and ``all.py`` read."""

from sweeps import (append_catalog, exp4a, exp4a_zipf, exp4b, exp4b_zipf, exp4c, gcs_throttle,
                    latency_models, retry_policies)

# Seed 001's grids, in the order ``sweeps/all.py`` runs them.
SEED001 = (exp4a.GRID, exp4b.GRID, exp4c.GRID, exp4a_zipf.GRID, exp4b_zipf.GRID)
# The studies beyond it: one setting varied over exp4c's curves.
STUDIES = (gcs_throttle.GRID, retry_policies.GRID, append_catalog.GRID, latency_models.GRID)

EXPERIMENTS = {grid.experiment: grid for grid in SEED001 + STUDIES}
