"""ray_jobs: fan sweep configs out over Ray and keep their results in a Parquet store.

Nothing here is specific to an experiment, and nothing here parses a
command line: sweep scripts declare a ``Grid`` and call
``commit_sweeps.sweep_command.sweep_main``. Public API:

- ``Grid``, ``GridError``, ``Treatment``, ``View``: a declared grid (what a study
  compares, where the dashboard shows it) and its validation error (``ray_jobs.grid``).
- ``ResultsStore``: read and write the results store (``ray_jobs.store``).
- ``RESULTS_SCHEMA``: the Arrow schema of a stored row (``ray_jobs.schema``).
- ``run_sweep``, ``SweepPlan`` (in ``ray_jobs.fanout``) and ``connect_ray``
  (in ``ray_jobs.connect``) for programs that drive Ray themselves.

The pure modules (``grid``, ``schema``, ``store``, ``lease``) never import
Ray, and importing this package imports none of its modules: each name
above is loaded from its home module on first use (``__getattr__``), so
``from ray_jobs import Grid`` costs the grid alone and readers of the store
(the dashboards) need pyarrow, not Ray.
tests/test_pure_imports.py holds the pure modules to it.
"""

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
