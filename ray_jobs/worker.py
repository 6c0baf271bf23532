"""What runs on a worker: a batch of units in, rows and failures out.

``run_units`` is plain Python (the benchmark and tests call it directly);
``run_batch`` is the same function as a Ray task.

Failure policy:

- An exception raised by simcore for one unit (a config that validates but
  cannot run, such as one asking for more tables than memory holds) is
  caught here and returned as a ``UnitFailure``: it is deterministic, so
  running it again would fail again, and the batch's other units still
  deliver their rows.
- A worker process or node that dies mid-task is a system failure: Ray
  runs the whole batch again (``max_retries``). Nothing is lost or stored
  twice, because rows only reach the store through the driver, once per
  completed task.
- ``retry_exceptions=False``: an exception escaping the task (a bug here,
  not in a config) is not retried either; the driver reports every unit of
  the batch as failed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional, Sequence

import pyarrow as pa
import ray

from simcore import SimConfig, simulate
from ray_jobs.batching import WorkUnit
from ray_jobs.provenance import Provenance
from ray_jobs.schema import make_row, rows_to_table

# Retries of a batch whose worker died (process killed, node lost). A worker killed for
# memory is retried at most ray_jobs.connect.OOM_RETRIES times, not forever.
SYSTEM_FAILURE_RETRIES = 5


@dataclass(frozen=True)
class UnitFailure:
    """A unit that raised instead of producing a row."""

    experiment: str
    config_hash: str
    seed: int
    config: dict
    error: str  # "ExceptionType: message"

    def describe(self) -> str:
        defaults = SimConfig().to_dict()
        changed = {name: value for name, value in self.config.items() if defaults.get(name) != value}
        return (f"{self.experiment} config {self.config_hash} seed {self.seed}: {self.error}\n"
                f"    config (fields not at their defaults): {changed}")


@dataclass(frozen=True)
class BatchResult:
    rows: pa.Table  # in ray_jobs.schema.RESULTS_SCHEMA
    failures: tuple[UnitFailure, ...]


def run_units(units: Sequence[WorkUnit], provenance: Provenance,
              max_memory_bytes: Optional[int] = None) -> BatchResult:
    """Simulate each unit; a unit that raises becomes a failure, the rest rows.

    ``max_memory_bytes``: the work bound's limit (default: simcore's, from this machine).
    """
    rows, failures = [], []
    for unit in units:
        started = time.perf_counter()
        try:
            (metrics,) = simulate(unit.config, seeds=[unit.seed], max_memory_bytes=max_memory_bytes)
        except Exception as error:  # reported with its config; the sweep goes on
            failures.append(UnitFailure(unit.experiment, unit.config.config_hash, unit.seed,
                                        unit.config.to_dict(), f"{type(error).__name__}: {error}"))
            continue
        rows.append(make_row(unit.experiment, unit.config, metrics,
                             package_version=provenance.package_version,
                             git_revision=provenance.git_revision,
                             wall_s=time.perf_counter() - started,
                             finished_at=datetime.now(timezone.utc)))
    return BatchResult(rows=rows_to_table(rows), failures=tuple(failures))


run_batch = ray.remote(num_cpus=1, max_retries=SYSTEM_FAILURE_RETRIES, retry_exceptions=False)(run_units)
