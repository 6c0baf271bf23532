"""ray_jobs: sweeps fanned out over Ray, the knee and capacity searches, and the Parquet results store."""

# Public API: Grid, GridError, Treatment, View (ray_jobs.grid: a declared grid, what a study compares, where the
# dashboard shows it); ResultsStore (ray_jobs.store); RESULTS_SCHEMA (ray_jobs.schema, a stored row); run_sweep and
# SweepPlan (ray_jobs.fanout) and connect_ray (ray_jobs.connect) for programs that drive Ray themselves. Nothing here
# parses a command line: sweep scripts call commit_sweeps.sweep_command.sweep_main. The pure modules (grid, schema,
# store, lease) never import Ray; tests/test_pure_imports.py holds them to it.

from __future__ import annotations

import importlib

# Public name -> its home module. Kept lazy on purpose: the package is imported by every
# grid file and by the dashboard, which must not pay for (or need) Ray.
_PUBLIC = {
    "Grid": "ray_jobs.grid",
    "GridError": "ray_jobs.grid",
    "Treatment": "ray_jobs.grid",
    "View": "ray_jobs.grid",
    "RESULTS_SCHEMA": "ray_jobs.schema",
    "ResultsStore": "ray_jobs.store",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'ray_jobs' has no attribute {name!r}")
    return getattr(importlib.import_module(_PUBLIC[name]), name)


def __dir__() -> list:
    return sorted(set(globals()) | set(_PUBLIC))
