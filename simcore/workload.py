"""The arriving transactions, drawn all at once with NumPy.

Everything about a transaction that does not depend on other transactions
(submit time, runtime, operation type, table) is drawn here in a few
vectorized calls; only the commit protocol, where transactions interact
through the catalog, is left to the engine.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import numpy as np

from simcore.catalog_latency import catalog_latencies
from simcore.config import SimConfig

FAST_APPEND = 0
VALIDATED_OVERWRITE = 1
MERGE_APPEND = 2
OP_NAMES = ("fast_append", "validated_overwrite", "merge_append")

ARRIVAL_FLOOR_MS = 1.0  # the reference floors its lognormal gaps at 1 ms

# Who submitted a transaction (Workload.job_class).
OPEN_LOOP, WRITER, MAINTENANCE = 0, 1, 2
JOB_CLASS_NAMES = ("open_loop", "writer", "maintenance")
JOB_CLASS_PREFIXES = (("writer", WRITER), ("maint", MAINTENANCE))


@dataclass(frozen=True)
class Workload:
    """Per-transaction inputs, ordered by submit time (all arrays of length n)."""

    submit_ms: np.ndarray  # float64
    runtime_ms: np.ndarray  # float64
    op: np.ndarray  # int8: FAST_APPEND, VALIDATED_OVERWRITE or MERGE_APPEND
    table: np.ndarray  # int32, 0-based; for Zipf, table k has rank k + 1
    # Writer workloads only (None for open-loop arrivals): submit_ms is then
    # the time a commit is *due*; it starts then or when the same job's
    # previous commit ends, whichever is later.
    chain_next: Optional[np.ndarray] = None  # int64: the same job's next transaction, -1 for its last
    job_class: Optional[np.ndarray] = None  # int8: WRITER or MAINTENANCE

    def __len__(self) -> int:
        return len(self.submit_ms)


def zipf_weights(num_tables: int, alpha: float) -> np.ndarray:
    """P(table k) for k = 0..n-1, proportional to 1/(k+1)^alpha."""
    w = 1.0 / np.power(np.arange(1, num_tables + 1, dtype=np.float64), alpha)
    return w / w.sum()


def table_probabilities(config: SimConfig) -> np.ndarray:
    if config.table_distribution == "zipf":
        return zipf_weights(config.num_tables, config.zipf_alpha)
    return np.full(config.num_tables, 1.0 / config.num_tables)


def draw_gaps(config: SimConfig, rng: np.random.Generator, n: int) -> np.ndarray:
    scale = config.inter_arrival_scale_ms
    if config.arrivals == "exponential":
        return rng.exponential(scale, n)
    gaps = rng.lognormal(np.log(scale), config.inter_arrival_sigma, n)
    return np.maximum(gaps, ARRIVAL_FLOOR_MS)


def draw_ops(config: SimConfig, rng: np.random.Generator, n: int) -> np.ndarray:
    return ops_of_uniforms(config, rng.random(n))


def ops_of_uniforms(config: SimConfig, u: np.ndarray) -> np.ndarray:
    """The op type of each transaction from one uniform draw each (the mix's shares, in FA, MA, VO order)."""
    op = np.full(len(u), VALIDATED_OVERWRITE, dtype=np.int8)
    op[u < config.fast_append_ratio + config.merge_append_ratio] = MERGE_APPEND
    op[u < config.fast_append_ratio] = FAST_APPEND
    return op


def committers(config: SimConfig) -> tuple[int, float]:
    """(jobs, interval in ms) of the jobs that commit a writer workload's files: the writers themselves, or
    with group commit one committer per table, committing every ``group_commit_s``. A committer asked to
    commit as soon as its previous commit lands (0 s) has its commits due one uncontended catalog read and
    CAS apart (their medians), the least any commit takes: it commits back to back whenever a commit takes
    longer, which every commit with any other request does."""
    if config.group_commit_s is None:
        return config.writers, config.commit_interval_s * 1000.0
    if config.group_commit_s > 0:
        return config.num_tables, config.group_commit_s * 1000.0
    read, cas = catalog_latencies(config)
    return config.num_tables, read.median_ms + cas.median_ms


def submitted_when_started(workload: Workload, start_ms: np.ndarray) -> Workload:
    """A back-to-back committer's workload (``group_commit_s`` 0) as it ran: each commit submitted when it
    started, one never started not submitted at all (its due time is only the committer's pace, not a time
    any writer waited from)."""
    submit = np.where(np.isnan(start_ms), np.inf, start_ms)
    return dataclasses.replace(workload, submit_ms=submit)


def draw_writer_workload(config: SimConfig, rng: np.random.Generator) -> Workload:
    """Writers (and maintenance jobs) committing on a schedule, each from a random phase.

    Each job's commits are due at phase + j x interval; the engine starts
    one when it is due or when the job's previous commit ends, whichever is
    later (``chain_next``), so a job that falls behind catches up at once
    and never runs two commits at a time.
    """
    duration_ms = config.duration_ms
    jobs = []  # per group of jobs: (due times, op codes, tables, runtimes, class, job ids), one entry per commit
    probabilities = table_probabilities(config)
    writers, interval_ms = committers(config)
    if config.group_commit_s is not None:  # one committer per table commits every writer's files
        writer_tables = np.arange(writers)
    elif config.table_distribution == "uniform":
        writer_tables = np.arange(writers) % config.num_tables
    else:
        writer_tables = rng.choice(config.num_tables, size=writers, p=probabilities)
    # A streaming writer's data files are written during the interval: its commit reads the
    # catalog and goes straight to the commit (no runtime between snapshot and commit).
    due, ops, counts = _writer_schedules(config, rng, writers, interval_ms)
    jobs.append((due, ops, np.repeat(writer_tables.astype(np.int32), counts), np.zeros(len(due)), WRITER,
                 np.repeat(np.arange(writers), counts)))
    if config.maintenance_jobs:
        interval_ms = config.maintenance_interval_s * 1000.0
        for m in range(config.maintenance_jobs):
            due = rng.random() * interval_ms + interval_ms * np.arange(int(duration_ms / interval_ms) + 1)
            due = due[due < duration_ms]
            runtime = np.maximum(rng.lognormal(np.log(config.runtime_median_ms), config.runtime_sigma, len(due)),
                                 config.runtime_min_ms)
            jobs.append((due, np.full(len(due), VALIDATED_OVERWRITE, np.int8),
                         np.full(len(due), m % config.num_tables, np.int32), runtime, MAINTENANCE,
                         np.full(len(due), writers + m)))
    submit = np.concatenate([j[0] for j in jobs])
    job_id = np.concatenate([j[5] for j in jobs])  # writers 0..W-1, then the maintenance jobs
    order = np.lexsort((job_id, submit))
    # Within a job the due times increase, so after sorting each job's commits keep their order.
    # Group the sorted positions by job (a stable sort keeps each job's positions increasing) and link
    # each to the next of the same job: O(n log n), where a pass per job was O(jobs x n).
    chain_next = np.full(len(submit), -1, np.int64)
    sorted_job = job_id[order]
    by_job = np.argsort(sorted_job, kind="stable")
    same_job = sorted_job[by_job[:-1]] == sorted_job[by_job[1:]]
    chain_next[by_job[:-1][same_job]] = by_job[1:][same_job]
    return Workload(submit_ms=submit[order], runtime_ms=np.concatenate([j[3] for j in jobs])[order],
                    op=np.concatenate([j[1] for j in jobs])[order],
                    table=np.concatenate([j[2] for j in jobs])[order],
                    chain_next=chain_next,
                    job_class=np.concatenate([np.full(len(j[0]), j[4], np.int8) for j in jobs])[order])


def writer_phases_s(seed: int, writers: int, interval_s: float) -> np.ndarray:
    """The writers' phases in [0, ``interval_s``) drawn from ``seed``: ``writer_phase_seed``'s, and the real
    writers' of ``studies.real_clients`` (one draw, so that the model can run a real run's own phases).

    >>> writer_phases_s(0, 3, 4.0).round(3).tolist()
    [2.548, 1.079, 0.164]
    """
    return np.random.default_rng(seed).uniform(0.0, interval_s, writers)


def _writer_schedules(config: SimConfig, rng: np.random.Generator, writers: int, interval_ms: float):
    """(due times, op codes, commits per writer) of every writer, writer by writer, as one pass of draws.

    Writer w draws its phase u (due times u x interval + j x interval before the end), then one
    uniform per commit for its op type: 1 + n_w consecutive uniforms of ``rng``. They are drawn here
    in one call from a copy of the generator, split writer by writer with scalar arithmetic (the same
    float64 operations NumPy does elementwise, so the same numbers), and ``rng`` is then moved past
    exactly as many uniforms (one 64-bit draw each), leaving it where a call per writer would. With
    ``writer_phase_seed`` the phases are ``writer_phases_s``'s instead, and each writer's phase uniform is
    drawn all the same, unused: the stream keeps its layout (a uniform per writer, then one per commit due).
    """
    duration_ms = config.duration_ms
    grid = interval_ms * np.arange(int(duration_ms / interval_ms) + 1)
    copy = np.random.Generator(type(rng.bit_generator)())
    copy.bit_generator.state = rng.bit_generator.state
    uniforms = copy.random(writers * (len(grid) + 1))  # enough for every writer's phase and commits
    steps = grid.tolist()
    phases, counts = [0.0] * writers, [0] * writers
    fixed = (None if config.writer_phase_seed is None
             else (writer_phases_s(config.writer_phase_seed, writers,
                                   config.commit_interval_s if config.group_commit_s is None
                                   else interval_ms / 1000.0) * 1000.0).tolist())
    at = 0  # the index of the next writer's phase in uniforms
    for w in range(writers):
        phase = float(uniforms[at]) * interval_ms if fixed is None else fixed[w]
        n = len(steps)
        while n and phase + steps[n - 1] >= duration_ms:  # due times increase: those before the end are a prefix
            n -= 1
        phases[w], counts[w] = phase, n
        at += 1 + n
    rng.random(at)  # moves rng past the uniforms used, as the per-writer calls did
    counts = np.array(counts, dtype=np.int64)
    # Writer by writer, its due times before the end (a prefix of phase + grid) and its op uniforms
    # (its block of the stream after the phase), picked with masks in that order.
    due = np.array(phases)[:, None] + grid[None, :]
    before_end = np.arange(len(grid))[None, :] < counts[:, None]
    is_op = np.ones(at, dtype=bool)
    is_op[np.cumsum(counts + 1) - (counts + 1)] = False  # where each writer's phase was drawn
    return due[before_end], ops_of_uniforms(config, uniforms[:at][is_op]), counts


def draw_workload(config: SimConfig, rng: np.random.Generator) -> Workload:
    """Draw every transaction submitted before the end of the simulated time."""
    if config.writers is not None:
        return draw_writer_workload(config, rng)
    duration_ms = config.duration_ms
    mean_gap = config.inter_arrival_scale_ms
    if config.arrivals == "lognormal":
        mean_gap = max(ARRIVAL_FLOOR_MS, mean_gap * np.exp(config.inter_arrival_sigma ** 2 / 2))
    # Draw a little more than the expected count, then top up in the rare
    # case the sum falls short of the duration.
    expected = duration_ms / mean_gap
    chunks = [draw_gaps(config, rng, int(expected * 1.05 + 6 * np.sqrt(expected) + 16))]
    total = chunks[0].sum()
    while total < duration_ms:
        chunks.append(draw_gaps(config, rng, int(expected * 0.1) + 16))
        total += chunks[-1].sum()
    submit = np.cumsum(np.concatenate(chunks))
    submit = submit[submit < duration_ms]
    n = len(submit)

    runtime = rng.lognormal(np.log(config.runtime_median_ms), config.runtime_sigma, n)
    runtime = np.maximum(runtime, config.runtime_min_ms)

    op = draw_ops(config, rng, n)

    if config.num_tables == 1:
        table = np.zeros(n, dtype=np.int32)
    elif config.table_distribution == "uniform":
        table = rng.integers(0, config.num_tables, n).astype(np.int32)
    else:
        cdf = np.cumsum(table_probabilities(config))
        table = np.minimum(np.searchsorted(cdf, rng.random(n), side="right"),
                           config.num_tables - 1).astype(np.int32)
    return Workload(submit_ms=submit, runtime_ms=runtime, op=op, table=table)
