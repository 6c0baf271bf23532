"""Hand-worked timelines on the 1 ms "instant" store: a few transactions, each committing, their instants exact.

Shared by the tests that work the corrected protocol and the commit designs out by hand. This module holds
no tests.
"""

from __future__ import annotations

import numpy as np

from simcore.engine import COMMITTED, run
from simcore.workload import FAST_APPEND, Workload

RUNTIME_MS = 1000.0
# Every storage operation takes exactly 1 ms, and so does each transaction's work between snapshot and commit.
BASE = dict(provider="instant", duration_s=700.0, runtime_median_ms=RUNTIME_MS, runtime_sigma=0.0,
            runtime_min_ms=0.0)


def run_committed(config, submits, tables, ops=None, runtimes=None):
    """The outcome of transactions submitted at ``submits`` (ms) to ``tables``, each of which must commit."""
    n = len(submits)
    workload = Workload(submit_ms=np.array(submits, float),
                        runtime_ms=np.full(n, RUNTIME_MS) if runtimes is None else np.array(runtimes, float),
                        op=np.full(n, FAST_APPEND, np.int8) if ops is None else np.array(ops, np.int8),
                        table=np.array(tables, np.int32))
    outcome = run(config, workload, np.random.default_rng(0))
    assert np.all(outcome.status == COMMITTED)
    return outcome


def commit_latency(outcome, k):
    """Transaction k's commit latency: from the end of its work to its commit's answer."""
    return outcome.end_ms[k] - outcome.commit_start_ms[k]
