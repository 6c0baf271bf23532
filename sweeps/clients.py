"""clients: each client preset beside the reference, on exp4c's providers, tables and mixes (3240 configs).

Real clients do not retry like the reference simulator (10 retries at once):
Iceberg Java makes 4 with exponential backoff and rewrites its manifest list
on every retry, delta-rs 15 at once, DuckLake 10 with a shrinking jitter,
and PyIceberg's and iceberg-go's current releases none (docs/reference/clients.md
cites each). Sweeps every preset in simcore/clients.toml over exp4c's grid,
so the dashboard and the knee search can set each beside ``reference``.
"""

import sys

from ray_jobs import Grid, Treatment, View
from simcore.clients import client_names
from sweeps.seed001 import (FAST_APPEND_RATIOS, INTER_ARRIVAL_SCALES_MS, PROVIDERS,
                            QUICK_INTER_ARRIVAL_SCALES_MS, QUICK_TABLE_COUNTS, TABLE_COUNTS)

GRID = Grid(
    experiment="clients",
    description="clients: every client preset x exp4c (provider x tables x FA share x inter-arrival)",
    fixed={"catalog": "storage"},
    swept={
        "client": client_names(),
        "provider": PROVIDERS,
        "num_tables": TABLE_COUNTS,
        "fast_append_ratio": FAST_APPEND_RATIOS,
        "inter_arrival_scale_ms": INTER_ARRIVAL_SCALES_MS,
    },
    quick={
        "client": ("reference", "iceberg-java", "delta-rs"),
        "provider": ("s3x", "s3", "gcp"),
        "num_tables": QUICK_TABLE_COUNTS,
        "fast_append_ratio": (1.0, 0.9),
        "inter_arrival_scale_ms": QUICK_INTER_ARRIVAL_SCALES_MS,
    },
    # "reference" is stored as an unset client; a preset's fields follow from its name.
    compares=Treatment("client", baseline=None,
                       companions=("retry", "retry_policy", "backoff_base_ms", "backoff_multiplier", "backoff_cap_ms",
                                   "backoff_jitter", "backoff_jitter_shape", "retry_budget_ms", "retry_rewrite"),
                       labels=((None, "reference"),)),
    view=View("treatment-colours", anchor="clients", nav="Clients", title="Client presets",
              lead="Usable throughput with real clients' retry settings (Iceberg Java, PyIceberg, iceberg-go, "
                   "delta-rs, DuckLake) beside the reference's (10 retries at once), per provider and mix against "
                   "table count: `commit-sweeps sweep clients`.",
              expects="the reference and each client preset",
              legend="One colour per client preset (docs/reference/clients.md cites each one's retry settings); the reference "
                     "retries at once, up to 10 times, as seed 001. Change: usable throughput relative to the "
                     "reference. Hollow: a lower bound; cross: no point above the threshold."),
)

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main

    sys.exit(sweep_main([GRID]))
