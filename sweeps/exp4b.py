"""exp4b: exp4a with a 90/10 FastAppend/ValidatedOverwrite mix (240 configs)."""

import sys

from sweeps.exp4a import GRID as EXP4A

GRID = EXP4A.derive(
    "exp4b",
    description="exp4b: as exp4a with FA 90% / VO 10%",
    fast_append_ratio=0.9,
    # VO convoys make 20 ms inter-arrival the costliest point of the grid
    # (seconds per run), so the quick subset starts at 50 ms.
    quick={**EXP4A.quick, "inter_arrival_scale_ms": (50, 100, 500, 2000)},
    knee_quick={"num_tables": (1, 10), "catalog_latency_ms": (10,)},
)

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main

    sys.exit(sweep_main([GRID]))
