"""A whole profile fitted: every operation measured, and the read and plain write where the samples time them.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Collection, Mapping, Optional, Sequence

from simcore.fit.contention import fit_operation
from simcore.fit.samples import SAMPLE_WRITE_BYTES, ClientStats, MeasuredLatency
from simcore.fit.throttle import fit_throttled_operation
from simcore.providers import OperationLatency, Provider


def with_measured_read(base: Provider, read: MeasuredLatency) -> Provider:
    """``base`` with its read latency replaced by the measured one (and its floor lowered to the fastest read,
    where the base's floor is above it: a floor is a bound on what the store can answer)."""
    return replace(base, read_median_ms=read.median_ms, read_sigma=read.sigma,
                   floor_ms=min(base.floor_ms, read.min_ms))


def with_measured_write(base: Provider, write: MeasuredLatency, size_bytes: int = SAMPLE_WRITE_BYTES) -> Provider:
    """``base`` with its plain write replaced by the measured one: writes of ``size_bytes`` had that median, so
    the fixed part is the median less the base's per-MiB part at that size (the probe's objects are too small
    to measure a per-MiB slope; the base's is kept), and the spread is the measured one. The floor is lowered
    to the fastest write, as for reads."""
    fixed = max(write.median_ms - base.write_ms_per_mib * size_bytes / 2**20, write.min_ms)
    return replace(base, write_base_ms=fixed, write_sigma=write.sigma, floor_ms=min(base.floor_ms, write.min_ms))


def starting_profile(base: Provider, *, name: Optional[str] = None, description: Optional[str] = None,
                     read: Optional[MeasuredLatency] = None, write: Optional[MeasuredLatency] = None,
                     round_ms_per_read: Optional[float] = None) -> Provider:
    """The profile ``fit_profile`` starts from: ``base`` renamed, with what the samples measured in place of the
    base's figures; only the conditional writes' terms are left to fit. ``fit`` checks it before fitting, so a
    name or a measured figure no profile may hold is refused before minutes of simulations."""
    profile = replace(base, name=name or base.name, description=description or base.description,
                      all_fixed=False)
    if read is not None:
        profile = with_measured_read(profile, read)
    if write is not None:
        profile = with_measured_write(profile, write)
    if round_ms_per_read is not None:
        profile = replace(profile, read_round_ms_per_read=round_ms_per_read)
    return profile


def fit_profile(base: Provider, measurements: Mapping[str, Sequence[ClientStats]], *, name: Optional[str] = None,
                description: Optional[str] = None, observed_at: Optional[float] = None,
                max_evaluations: Optional[int] = None, failed_ratios: Optional[Mapping[str, float]] = None,
                throttled: Collection[str] = (), read: Optional[MeasuredLatency] = None,
                write: Optional[MeasuredLatency] = None, round_ms_per_read: Optional[float] = None,
                progress=None, report: Optional[dict] = None) -> tuple[Provider, dict[str, float]]:
    """A profile fitted to every operation measured (``cas`` first: it also fixes when reads observe).

    ``throttled``: the operations the store throttles on one object (GCS's and Azure's CAS), fitted with the
    throttle model instead of the contention terms. ``read``: the read latency measured with these ops
    (``read_samples_file``): the profile's read becomes it, in place of the base's. ``write``: the plain writes
    measured with them: the profile's plain write becomes it (the fit itself uses only reads and conditional
    writes, so it changes no fitted term; the commits the profile simulates write their files at it).
    ``round_ms_per_read``: what each further read adds to a round of reads sent at once (``Samples``); the
    profile keeps it (only delta-rs's call reads in such rounds; no fitted term depends on it).
    """
    profile = starting_profile(base, name=name, description=description, read=read, write=write,
                               round_ms_per_read=round_ms_per_read)
    losses = {}
    for operation in sorted(measurements, key=lambda op: op != "cas"):
        if operation == "append" and not profile.supports_append:
            profile = replace(profile, append=OperationLatency(1.0, 0.0))  # fitted below
        fit_one = fit_throttled_operation if operation in throttled else fit_operation
        started = time.perf_counter()  # the time budget is per operation: about a minute, five throttled
        profile, losses[operation] = fit_one(profile, operation, measurements[operation],
                                             failed_ratio=(failed_ratios or {}).get(operation),
                                             observed_at=observed_at, max_evaluations=max_evaluations,
                                             read_measured=read is not None, progress=progress, report=report)
        if progress:
            progress(f"{profile.name} {operation}: fitted in {time.perf_counter() - started:.0f} s")
        observed_at = profile.read_observed_at  # one read model for both operations
    return profile, losses
