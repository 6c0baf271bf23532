"""gcs_throttle: the GCS frontier with and without its per-object write limit (360 configs).

GCS throttles writes to one object to about one per second (seed 003; the
documented limit). seed 001's GCS figures come from a model without it, so
its GCS rate is too high. This sweeps exp4c's GCS points twice: unthrottled
(as the reference) and with a token bucket of one write per second on the
catalog object, where a CAS that finds no token is refused like a 429.
"""

import sys

from ray_jobs import Grid, Treatment, sweep_main
from simcore import PROVIDERS
from sweeps.seed001 import (FAST_APPEND_RATIOS, INTER_ARRIVAL_SCALES_MS, QUICK_INTER_ARRIVAL_SCALES_MS,
                            QUICK_TABLE_COUNTS, TABLE_COUNTS)

GCS_WRITES_PER_S = PROVIDERS["gcp"].object_writes_per_s

GRID = Grid(
    experiment="gcs_throttle",
    description="gcs_throttle: exp4c's GCS curves without and with the 1 write/s object throttle",
    fixed={"provider": "gcp", "catalog": "storage"},
    swept={
        "cas_throttle_per_s": (None, GCS_WRITES_PER_S),
        "num_tables": TABLE_COUNTS,
        "fast_append_ratio": FAST_APPEND_RATIOS,
        "inter_arrival_scale_ms": INTER_ARRIVAL_SCALES_MS,
    },
    quick={"num_tables": QUICK_TABLE_COUNTS, "fast_append_ratio": (1.0,),
           "inter_arrival_scale_ms": QUICK_INTER_ARRIVAL_SCALES_MS},
    compares=Treatment("cas_throttle_per_s", baseline=None, companions=("cas_throttle_burst",),
                       labels=((None, "unthrottled"), (GCS_WRITES_PER_S, f"throttled to {GCS_WRITES_PER_S:g} write/s"))),
)

if __name__ == "__main__":
    sys.exit(sweep_main([GRID]))
