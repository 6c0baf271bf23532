"""Connect the driver to Ray: the cluster in ``RAY_ADDRESS``, else an embedded one.

``ray job submit`` sets ``RAY_ADDRESS`` for the driver it starts; the job's
runtime environment (its uploaded working directory) then applies to every
task, so nothing is added here. Without it, a local Ray is started with one
worker slot per core of this machine. Its workers start in the driver's
current directory, which need not be the checkout, so the folder holding
``simcore`` and ``ray_jobs`` is put on their ``PYTHONPATH``: a sweep then
runs from a plain checkout without installing the package.

Ray starts its workers at niceness 15 by default, so that on a shared
machine they yield to everything else, even to processes niced below them.
An embedded sweep is the job its user started, so its workers run at the
driver's own niceness instead (``nice python sweeps/exp4c.py`` still lowers
it); ``RAY_worker_niceness`` in the environment overrides this.

A task killed for running out of memory is retried at most
``OOM_RETRIES`` times (Ray's default is forever, which turns one
oversized point into an endless loop); ``RAY_task_oom_retries`` in the
environment overrides this. Before starting a local Ray, the processes a
killed driver left behind are stopped, and the new session is marked as
this driver's (see ``ray_jobs.orphans``).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import ray

from ray_jobs.orphans import cleanup_orphans, mark_session

# The embedded cluster only moves small result tables through its object store.
_LOCAL_OBJECT_STORE_BYTES = 256 * 1024 * 1024
_WORKER_NICENESS_ENV = "RAY_worker_niceness"
_OOM_RETRIES_ENV = "RAY_task_oom_retries"
OOM_RETRIES = 2


@dataclass(frozen=True)
class RayConnection:
    description: str  # for people: where the sweep runs
    started_local: bool
    cleaned: tuple = ()  # ray_jobs.orphans.Stopped: what a killed driver had left, stopped first


def connect_ray(num_cpus: int | None = None) -> RayConnection:
    """Connect to ``$RAY_ADDRESS`` or start local Ray with ``num_cpus`` (default: all cores)."""
    # Read by this driver's core worker, which owns (and so retries) the tasks it submits.
    os.environ.setdefault(_OOM_RETRIES_ENV, str(OOM_RETRIES))
    address = os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, logging_level=logging.WARNING)
        cpus = int(ray.cluster_resources().get("CPU", 0))
        return RayConnection(f"Ray cluster at {address} ({cpus} CPUs now)", started_local=False)
    cleaned = tuple(cleanup_orphans())
    num_cpus = num_cpus or os.cpu_count() or 1
    code_root = str(Path(__file__).resolve().parent.parent)
    python_path = os.pathsep.join(p for p in (code_root, os.environ.get("PYTHONPATH")) if p)
    # The raylet reads its settings from RAY_<name> variables when it starts.
    niceness_was_set = _WORKER_NICENESS_ENV in os.environ
    os.environ.setdefault(_WORKER_NICENESS_ENV, str(os.nice(0)))
    try:
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, logging_level=logging.WARNING,
                 object_store_memory=_LOCAL_OBJECT_STORE_BYTES,
                 runtime_env={"env_vars": {"PYTHONPATH": python_path}})
    finally:
        if not niceness_was_set:
            del os.environ[_WORKER_NICENESS_ENV]
    mark_session(ray._private.worker._global_node.get_session_dir_path())
    return RayConnection(f"local Ray with {num_cpus} CPUs", started_local=True, cleaned=cleaned)
