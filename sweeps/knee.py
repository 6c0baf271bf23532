"""Knee search: each curve's usable throughput to 2%, by bisection on Ray instead of a grid.

    python sweeps/knee.py --experiment exp4c [--quick] [--store URI] [--seeds N] [--duration-s S]

A curve is one experiment's grid with the inter-arrival scale left free
(provider or catalog latency, tables, mix). The grids of seed 001 read
the knee off ten scales, so between 2000 and 5000 ms, say, it is known
only to within a factor of 2.5; the search brackets it to 2% in rate with
about nine points per curve (see simcore/bisection.py and docs/knee.md).
Rows go to the experiment ``<name>_knee`` of the same store.

``--quick`` searches a few curves per experiment, declared here: fast
enough for about a minute on two cores, and still showing a fast and a
slow provider (or catalog) at one and at ten tables.
"""

import sys

from ray_jobs.knee_cli import knee_main
from sweeps.catalog import EXPERIMENTS

# The knee search's own quick subsets (the grids' own quick subsets pick
# inter-arrival points, which the search does not need, and more curves).
_QUICK = {
    "exp4c": {"provider": ("s3x", "s3"), "num_tables": (1, 10), "fast_append_ratio": (1.0,)},
    "exp4a": {"num_tables": (1, 10), "catalog_latency_ms": (10, 50)},
    "exp4b": {"num_tables": (1, 10), "catalog_latency_ms": (10,)},
    "exp4a_zipf": {"num_tables": (1, 10), "catalog_latency_ms": (10, 50)},
    "exp4b_zipf": {"num_tables": (1, 10), "catalog_latency_ms": (10,)},
    "gcs_throttle": {"num_tables": (1, 10), "fast_append_ratio": (1.0,)},
    "retry_policies": {"provider": ("s3x",), "num_tables": (1,), "fast_append_ratio": (0.9,)},
    "append_catalog": {"provider": ("s3x",), "num_tables": (1, 10), "fast_append_ratio": (1.0,)},
    "latency_models": {"num_tables": (1, 10), "fast_append_ratio": (1.0, 0.9)},
}

KNEE_GRIDS = {name: EXPERIMENTS[name].derive(name, quick=quick) for name, quick in _QUICK.items()}

if __name__ == "__main__":
    sys.exit(knee_main(KNEE_GRIDS))
