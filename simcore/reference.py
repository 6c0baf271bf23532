"""Agreement targets with the reference simulator (cdouglas/endive).

Shared by the dev-set test and the fidelity script, so both judge agreement
the same way. A metric agrees when it is within its target, or within three
standard errors of the difference of the two seed-means (the seed spread is
estimated from simcore's own seeds, which are more numerous than the
reference's two: a standard deviation from two samples is too unstable to
judge with).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from simcore.config import SimConfig


@dataclass(frozen=True)
class Target:
    metric: str
    absolute: float = 0.0  # allowed gap in the metric's own unit
    relative: float = 0.0  # allowed gap as a fraction of the reference value


TARGETS = (
    Target("success_rate", absolute=0.02),
    Target("throughput_cps", relative=0.03),
    Target("commit_latency_mean_ms", relative=0.05),
    Target("commit_latency_p99_ms", relative=0.10),
    Target("vo_success_rate", absolute=0.02),
    Target("vo_commit_latency_mean_ms", relative=0.05),
)


def agrees(target: Target, ours_mean: float, ours_std: float, n_ours: int, ref_mean: float,
           n_ref: int) -> tuple[bool, str]:
    """(ok, why) for one metric of one config."""
    gap = abs(ours_mean - ref_mean)
    allowed = max(target.absolute, target.relative * abs(ref_mean))
    se = ours_std * math.sqrt(1.0 / n_ours + 1.0 / n_ref) if n_ours > 1 else 0.0
    if gap <= allowed:
        return True, "within target"
    if gap <= 3 * se:
        return True, f"within 3 se ({se:.3g})"
    return False, f"gap {gap:.4g} > target {allowed:.4g} and 3 se {3 * se:.3g}"


def config_from_reference_row(row: dict, duration_s: Optional[float] = None) -> SimConfig:
    """The SimConfig of one row of the reference dev set (endive_dev_set.csv), made at revision 3bded463
    with the protocol seed 001 published (the reference's later fixes are ``protocol="corrected"``)."""
    latency = row.get("catalog_latency_ms")
    return SimConfig(protocol="published",
        provider=row["provider"], catalog=row["catalog_backend"],
        catalog_latency_ms=float(latency) if latency not in (None, "") else None,
        num_tables=int(row["num_tables"]), fast_append_ratio=float(row["fast_append_ratio"]),
        inter_arrival_scale_ms=float(row["inter_arrival_scale_ms"]),
        duration_s=float(duration_s if duration_s is not None else row["duration_s"]))
