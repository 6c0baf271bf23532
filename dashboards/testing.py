"""Write small results stores that follow the store contract, for tests and benchmarks.

The sweeps write the real store (through ray_jobs); this module exists so the
dashboard's tests and benchmark can make stores of a known shape without
running a sweep: hand-made rows with known answers, or a few real
``simcore.simulate`` rows. It writes the contract's layout and columns:
``<store>/<experiment>/<name>.parquet``, one row per (experiment,
config_hash, seed) with every SimConfig field, the metrics, and provenance.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import typing
from typing import Iterable, Mapping, Optional

import pyarrow as pa
import pyarrow.parquet as pq

NAN = float("nan")

_SCALAR_INT_METRICS = ("n_arrivals", "n_unfinished", "n_txns", "n_committed", "n_aborted", "aborted_max_retries",
                       "aborted_validation", "conflicts_same_table", "conflicts_catalog_only",
                       "fa_n_txns", "vo_n_txns", "ma_n_txns")
_SCALAR_FLOAT_METRICS = (
    "success_rate", "throughput_cps", "commit_latency_mean_ms", "commit_latency_p50_ms", "commit_latency_p95_ms",
    "commit_latency_p99_ms", "retries_mean",
    *(f"{prefix}_{name}" for prefix in ("fa", "vo", "ma")
      for name in ("success_rate", "throughput_cps", "commit_latency_mean_ms", "commit_latency_p99_ms")),
)
_LIST_INT_METRICS = ("table_n_txns", "table_n_committed", "table_conflicts_same_table",
                     "table_conflicts_catalog_only")
_LIST_FLOAT_METRICS = ("table_success_rate",)


# Metrics a store may or may not have (newer than the first stores); written only when a row has them.
_OPTIONAL_INT_METRICS = ("cas_throttled",)


@functools.lru_cache(maxsize=1)
def _config_field_types() -> dict:
    """SimConfig field -> Arrow type, from its annotations (Optional[X] -> X)."""
    from simcore import SimConfig  # only tests and benchmarks write stores; keep the import lazy

    arrow = {int: pa.int64(), float: pa.float64(), str: pa.string()}
    types = {}
    for name, hint in typing.get_type_hints(SimConfig).items():
        arguments = [argument for argument in typing.get_args(hint) if argument is not type(None)]
        types[name] = arrow.get(arguments[0] if arguments else hint, pa.string())
    return types


def _config_type(name: str, value) -> pa.DataType:
    # From the annotations, so an optional field that is None in the first
    # row still gets its real type (a float backoff, a string policy).
    known = _config_field_types()
    if name in known:
        return known[name]
    return pa.float64() if isinstance(value, float) else pa.int64() if isinstance(value, int) else pa.string()


def contract_schema(config_fields: Mapping, optional_metrics: tuple = ()) -> pa.Schema:
    """The store's Arrow schema, given one config dict (for the config columns' types).

    ``optional_metrics``: the optional metric columns (``cas_throttled``) to include.
    """
    fields = [pa.field("experiment", pa.string()), pa.field("config_hash", pa.string()),
              pa.field("seed", pa.int64())]
    fields += [pa.field(name, _config_type(name, value)) for name, value in config_fields.items()]
    fields += [pa.field(name, pa.int64()) for name in _SCALAR_INT_METRICS + tuple(optional_metrics)]
    fields += [pa.field(name, pa.float64()) for name in _SCALAR_FLOAT_METRICS]
    fields += [pa.field(name, pa.list_(pa.int64())) for name in _LIST_INT_METRICS]
    fields += [pa.field(name, pa.list_(pa.float64())) for name in _LIST_FLOAT_METRICS]
    fields += [pa.field("package_version", pa.string()), pa.field("git_revision", pa.string()),
               pa.field("wall_s", pa.float64()), pa.field("finished_at", pa.timestamp("us", tz="UTC"))]
    return pa.schema(fields)


def contract_row(experiment: str, config, seed: int, metrics: Mapping, *,
                 finished_at: Optional[dt.datetime] = None, package_version: str = "0.1.0",
                 git_revision: Optional[str] = None, wall_s: float = 0.1) -> dict:
    """One store row: ``config`` is a ``simcore.SimConfig`` (or a dict of its fields).

    Metrics not given are NaN (floats), 0 (counts) or empty lists, so a test
    states only the numbers it checks.
    """
    if isinstance(config, Mapping):
        from simcore import SimConfig  # validates and fills defaults, as the sweeps do
        config = SimConfig.from_dict(dict(config))
    row = {"experiment": experiment, "config_hash": config.config_hash, "seed": int(seed), **config.to_dict()}
    row.update({name: 0 for name in _SCALAR_INT_METRICS})
    row.update({name: NAN for name in _SCALAR_FLOAT_METRICS})
    row.update({name: [] for name in _LIST_INT_METRICS + _LIST_FLOAT_METRICS})
    unknown = sorted(set(metrics) - set(row) - set(_OPTIONAL_INT_METRICS))
    if unknown:
        raise ValueError(f"metrics: {unknown} are not store metric columns")
    row.update(metrics)
    row.update({"package_version": package_version, "git_revision": git_revision, "wall_s": float(wall_s),
                "finished_at": finished_at or dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)})
    return row


def write_store_file(store_dir: str, experiment: str, rows: Iterable[dict], name: str = "part-0000") -> str:
    """Write ``rows`` to ``<store_dir>/<experiment>/<name>.parquet``; returns the path."""
    rows = list(rows)
    if not rows:
        raise ValueError("rows: at least one row is needed to write a data file")
    config_fields = {key: rows[0][key] for key in rows[0]
                     if key not in ("experiment", "config_hash", "seed", "package_version", "git_revision",
                                    "wall_s", "finished_at")
                     and key not in _SCALAR_INT_METRICS + _SCALAR_FLOAT_METRICS + _LIST_INT_METRICS
                     + _LIST_FLOAT_METRICS + _OPTIONAL_INT_METRICS}
    optional = tuple(name for name in _OPTIONAL_INT_METRICS if any(name in row for row in rows))
    if optional:
        rows = [{name: None for name in optional} | row for row in rows]
    schema = contract_schema(config_fields, optional)
    table = pa.Table.from_pylist(rows, schema=schema)
    directory = os.path.join(store_dir, experiment)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{name}.parquet")
    pq.write_table(table, path)
    return path


def simulated_rows(experiment: str, configs: Iterable, seeds: Iterable[int]) -> list[dict]:
    """Store rows for ``configs`` (SimConfigs) made by really running ``simcore.simulate``."""
    import time

    from simcore import __version__ as simcore_version
    from simcore import simulate

    rows = []
    seeds = list(seeds)
    for config in configs:
        started = time.perf_counter()
        results = simulate(config, seeds=seeds)
        wall_s = (time.perf_counter() - started) / len(seeds)
        for result in results:
            metrics = {key: value for key, value in result.items() if key != "seed"}
            rows.append(contract_row(experiment, config, result["seed"], metrics, package_version=simcore_version,
                                     wall_s=wall_s, finished_at=dt.datetime.now(dt.timezone.utc)))
    return rows
