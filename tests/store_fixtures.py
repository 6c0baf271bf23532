"""Results stores for tests, written by the product's own writer.

Every store a test reads is written by ``ray_jobs.store.ResultsStore`` (the
writer the sweeps use), so the dashboard's tests read exactly what a sweep
writes: digest-named files, ``RESULTS_SCHEMA`` columns, atomic replaces.

- ``contract_row``: one hand-made row; metrics a test does not state are
  unmeasured (zero counts, NaN rates, empty per-table lists).
- ``write_store_file``: rows of one experiment, written as one store file;
  for a declared study (``sweeps.catalog``) the sweep's plan too, which
  says what the study compares, as ``commit-sweeps sweep`` would record it.
- ``simulated_rows``: rows made by really simulating, through the sweep
  worker's own ``run_units``.
- ``write_digest_named``: a foreign file disguised as the store's own (a
  valid content digest in its name), to test what the reader checks after
  the digest.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Iterable, Mapping, Optional

import pyarrow as pa
import pyarrow.parquet as pq

from simcore import SimConfig, __version__ as simcore_version
from simcore.builder import build_config
from ray_jobs.schema import make_row, rows_to_table, unmeasured_metrics
from ray_jobs.store import ResultsStore
from ray_jobs.store_files import keys_digest as _keys_digest

T0 = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)


def contract_row(experiment: str, config, seed: int, metrics: Mapping = (), *,
                 finished_at: Optional[dt.datetime] = None, package_version: str = "0.1.0",
                 git_revision: Optional[str] = None, wall_s: float = 0.1) -> dict:
    """One store row; ``config`` is a ``SimConfig`` or a dict of its fields (validated, a client's preset and the
    defaults filled: ``simcore.builder.build_config``)."""
    if isinstance(config, Mapping):
        config = build_config(config)
    measured = unmeasured_metrics()
    unknown = sorted(set(dict(metrics)) - set(measured))
    if unknown:
        raise ValueError(f"metrics: {unknown} are not store metric columns")
    measured.update(metrics)
    measured["seed"] = int(seed)
    return make_row(experiment, config, measured, package_version=package_version, git_revision=git_revision,
                    wall_s=wall_s, finished_at=finished_at or T0)


def write_store_file(store_dir: str, experiment: str, rows: Iterable[dict]) -> str:
    """Write ``rows`` (all of ``experiment``) to the store at ``store_dir`` as one file; returns its path."""
    rows = list(rows)
    if not rows:
        raise ValueError("rows: at least one row is needed to write a data file")
    others = sorted({row["experiment"] for row in rows} - {experiment})
    if others:
        raise ValueError(f"rows: experiments {others} given to write under {experiment!r}")
    store = ResultsStore(str(store_dir))
    (path,) = store.write_rows(rows_to_table(rows))
    _record_study_plan(store, experiment, rows)
    return path


def _record_study_plan(store: ResultsStore, experiment: str, rows: list) -> None:
    from ray_jobs.fanout import SweepPlan
    from sweeps.catalog import EXPERIMENTS

    grid = EXPERIMENTS.get(experiment)
    if grid is None or grid.compares is None:
        return
    configs = {row["config_hash"]: SimConfig.from_dict({name: row[name] for name in SimConfig().to_dict()})
               for row in rows}
    plan = SweepPlan(experiment, tuple(configs.values()), tuple(sorted({row["seed"] for row in rows})),
                     compares=grid.compares.record())
    store.write_plan(experiment, plan.record())


def simulated_rows(experiment: str, configs: Iterable[SimConfig], seeds: Iterable[int]) -> list[dict]:
    """Store rows for ``configs`` made by the sweep worker's own code path (``run_units``)."""
    from ray_jobs.batching import WorkUnit
    from ray_jobs.provenance import Provenance
    from ray_jobs.worker import run_units

    units = [WorkUnit(experiment, config, seed) for config in configs for seed in seeds]
    result = run_units(units, Provenance(package_version=simcore_version, git_revision=None))
    if result.failures:
        raise RuntimeError(f"simulation failed: {result.failures[0].describe()}")
    return result.rows.to_pylist()


def write_digest_named(directory: Path, table: pa.Table) -> Path:
    """Write ``table`` into ``directory`` under a name with its valid content digest, as the store names files."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    data = sink.getvalue().to_pybytes()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # Named as the writer names files (part-<keys>-<content>), so only the checks after the name can catch it.
    keys = _keys_digest(table) if {"experiment", "config_hash", "seed"} <= set(table.column_names) else "0" * 20
    path = directory / f"part-{keys}-{hashlib.sha256(data).hexdigest()[:32]}.parquet"
    path.write_bytes(data)
    return path
