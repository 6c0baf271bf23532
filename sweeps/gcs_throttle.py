"""gcs_throttle: the GCS frontier with and without its per-object write limit (360 configs).

GCS throttles writes to one object to about one per second (seed 003; the
documented limit). seed 001's GCS figures come from a model without it, so
its GCS rate is too high. This sweeps exp4c's GCS points twice: unthrottled
(as the reference) and with a token bucket of one write per second on the
catalog object, where a CAS that finds no token is refused like a 429.
"""

import sys

from ray_jobs import Grid, Treatment, View
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
    knee_quick={"num_tables": (1, 10), "fast_append_ratio": (1.0,)},
    view=View("treatment-frontier", anchor="throttle", nav="GCS throttle", title="GCS single-object write throttle",
              lead="The GCS usable-throughput frontier with the per-object write limit (about 1 write/s) modelled, "
                   "next to the unthrottled one that seed 001 reports, per mix, against table count.",
              expects="unthrottled and throttled runs",
              legend="Solid: unthrottled (as seed 001). Dashed: with the per-object CAS limit (a token bucket on the "
                     "catalog object; a CAS that finds no token is refused like a 429). Hollow: a lower bound; cross: "
                     "no point above the threshold. Change: usable throughput relative to unthrottled."),
)

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main

    sys.exit(sweep_main([GRID]))
