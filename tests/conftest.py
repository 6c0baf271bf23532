"""The suite's file order: the longest files first.

scripts/test.sh runs the suite on pytest-xdist with ``--dist loadfile --no-loadscope-reorder``: each worker
takes whole files, in the order collected here. A long file started last keeps one worker busy while the
others have finished; started first, the short files fill in beside it (longest first is the classic
schedule for jobs of known length on a few machines). ``LONGEST_FIRST`` is ordered by how long each file
took on its own (``pytest tests/FILE -n 0 --durations=15``, on two cores, without Numba's on-disk cache for
the ones that compile most); a file not listed keeps its place after them. A stale entry costs balance,
never a test.
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent

LONGEST_FIRST = (
    "test_hostile_input.py",        # ~1,900 forked commands, a fit in each of the fit flags' cases
    "test_engine_vs_oracle.py",     # the scalar oracle; without Numba's cache, a compile per config shape
    "test_ray_jobs.py",             # a two-node Ray cluster, kills, a job submission
    "test_probe.py",                # moto's S3 server behind a slow proxy, interrupted probes
    "test_chart_local_cluster.py",  # the chart's containers as processes, a quick sweep on them
    "test_throttle.py",
    "test_clients.py",
    "test_knee_search.py",
    "test_store.py",
    "test_sweep_bounds_and_cleanup.py",
    "test_store_heals.py",
    "test_sweeps.py",
    "test_measured.py",
    "test_failed_write_answer.py",
    "test_dashboard_browser.py",
    "test_holdout.py",
    "test_commit_hold.py",
    "test_capacity.py",
    "test_dashboard_server.py",
    "test_corrected_reference.py",
    "test_dashboard_build.py",
    "test_chart_render.py",
    "test_reference_devset.py",
    "test_speed_benchmark.py",
    "test_designs_vs_oracle.py",
    "test_probe_catalog.py",
    "test_fit_throttle.py",
    "test_iceberg_java.py",
)


def pytest_collection_modifyitems(items) -> None:
    rank = {name: position for position, name in enumerate(LONGEST_FIRST)}

    def file_rank(item) -> int:
        path = Path(str(item.path))
        return rank.get(path.name, len(rank)) if path.parent == TESTS else len(rank)

    items.sort(key=file_rank)  # stable: a file's own tests keep their order
