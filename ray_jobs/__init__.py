"""ray_jobs: fan sweep configs out over Ray and keep their results in a Parquet store.

Nothing here is specific to an experiment: sweep scripts declare a ``Grid``
and call ``sweep_main``. Public API:

- ``Grid``, ``GridError``, ``Treatment``: a declared grid (and what a study compares) and its validation error.
- ``sweep_main(grids, argv)``: the command line shared by every sweep script.
- ``ResultsStore``, ``default_store_uri()``: read and write the results store (the default location is
  ``simcore.flags``', where ``--store`` is defined).
- ``RESULTS_SCHEMA``: the Arrow schema of a stored row.
- ``run_sweep``, ``SweepPlan`` (in ``ray_jobs.fanout``) and ``connect_ray``
  (in ``ray_jobs.connect``) for programs that drive Ray themselves.

Importing this package does not import Ray: readers of the store (the
dashboards) only need pyarrow.
"""

from ray_jobs.cli import sweep_main
from ray_jobs.grid import Grid, GridError, Treatment
from ray_jobs.schema import RESULTS_SCHEMA
from ray_jobs.store import ResultsStore
from simcore.flags import default_store_uri  # defined with the --store flag; part of this API as it always was

__all__ = ["Grid", "GridError", "RESULTS_SCHEMA", "ResultsStore", "Treatment", "default_store_uri", "sweep_main"]
