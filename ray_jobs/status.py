"""What a store holds, per experiment: configs done of total, seeds, last update.

"Total" comes from the plan the latest sweep of that experiment recorded
(``_sweep.json``); a config counts as done when every seed of that plan is
stored for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Optional

import pyarrow.compute as pc

from ray_jobs.store import ResultsStore, UnreadableFile, shown


@dataclass(frozen=True)
class ExperimentStatus:
    experiment: str
    rows: int
    configs_stored: int
    seeds: tuple[int, ...]
    last_update: Optional[datetime]
    planned_configs: Optional[int]  # None when no plan was recorded
    planned_done: Optional[int]
    planned_seeds: tuple[int, ...]
    quick: bool


@dataclass(frozen=True)
class StoreStatus:
    location: str
    experiments: tuple[ExperimentStatus, ...]
    unreadable: tuple[UnreadableFile, ...]
    duplicates_dropped: int


def store_status(store: ResultsStore) -> StoreStatus:
    scan = store.scan()
    experiments = []
    for experiment in store.experiments():
        rows = scan.table.filter(pc.equal(scan.table.column("experiment"), experiment))
        hashes = rows.column("config_hash").to_pylist()
        seeds = rows.column("seed").to_pylist()
        seeds_by_config: dict[str, set[int]] = {}
        for config_hash, seed in zip(hashes, seeds):
            seeds_by_config.setdefault(config_hash, set()).add(seed)
        last = pc.max(rows.column("finished_at")).as_py() if rows.num_rows else None
        plan = store.read_plan(experiment)
        planned_configs = planned_done = None
        planned_seeds: tuple[int, ...] = ()
        if plan is not None:
            planned_seeds = tuple(plan["seeds"])
            planned_configs = len(plan["config_hashes"])
            planned_done = sum(1 for h in plan["config_hashes"] if set(planned_seeds) <= seeds_by_config.get(h, set()))
        experiments.append(ExperimentStatus(
            experiment=experiment, rows=rows.num_rows, configs_stored=len(seeds_by_config),
            seeds=tuple(sorted(set(seeds))), last_update=last, planned_configs=planned_configs,
            planned_done=planned_done, planned_seeds=planned_seeds, quick=bool(plan and plan.get("quick"))))
    return StoreStatus(location=store.location(), experiments=tuple(experiments),
                       unreadable=scan.unreadable + store.bad_documents,
                       duplicates_dropped=scan.duplicates_dropped)


def format_seeds(seeds: tuple[int, ...]) -> str:
    """1,2,3,5 -> "1-3,5"."""
    if not seeds:
        return "-"
    parts, start, previous = [], seeds[0], seeds[0]
    for seed in list(seeds[1:]) + [None]:
        if seed is not None and seed == previous + 1:
            previous = seed
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if seed is not None:
            start = previous = seed
    return ",".join(parts)


def format_status(status: StoreStatus, read_s: Optional[float] = None) -> str:
    lines = [f"store: {shown(status.location)}"]
    if not status.experiments:
        lines.append("nothing stored yet")
    else:
        header = ("experiment", "configs done (latest sweep)", "seeds stored", "rows", "configs stored",
                  "last update (UTC)")
        table = [header]
        for e in status.experiments:
            if e.planned_configs is None:
                done = "no plan recorded"
            else:
                done = f"{e.planned_done}/{e.planned_configs}{' quick' if e.quick else ''}" \
                       f" x seeds {format_seeds(e.planned_seeds)}"
            last = e.last_update.strftime("%Y-%m-%d %H:%M:%S") if e.last_update else "-"
            table.append((shown(e.experiment), done, format_seeds(e.seeds), str(e.rows), str(e.configs_stored), last))
        widths = [max(len(row[i]) for row in table) for i in range(len(header))]
        lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in table]
    if status.duplicates_dropped:
        lines.append(f"{status.duplicates_dropped} duplicate rows ignored (the latest of each key is used)")
    for bad in status.unreadable:
        lines.append(shown(bad.describe()))
    if read_s is not None:
        lines.append(f"(read in {read_s:.2f} s)")
    return "\n".join(lines)
