"""Metrics on a hand-made run whose answers are worked out by hand."""

import math

import numpy as np
import pytest

from simcore import SimConfig, usable_throughput
from simcore.engine import ABORTED_MAX_RETRIES, ABORTED_VALIDATION, COMMITTED, UNFINISHED, Outcome
from simcore.metrics import summarize, transactions_table
from simcore.workload import FAST_APPEND as FA, VALIDATED_OVERWRITE as VO, Workload

# duration 1000 s with a 20 s runtime median: W = 300 s, window [300 s, 700 s).
CONFIG = SimConfig(num_tables=2, runtime_median_ms=20_000, duration_s=1000)

#            submit_s status               op  table end_s  start_s retries same cat
TXNS = [
    (100,     COMMITTED,           FA, 0,    130,   125,    1,      1,   0),  # before the window
    (300,     COMMITTED,           FA, 0,    331,   330,    1,      0,   1),  # commit latency 1 s
    (400,     COMMITTED,           VO, 1,    433,   430,    2,      2,   0),  # 3 s
    (450,     ABORTED_MAX_RETRIES, FA, 1,    500,   470,    10,     4,   7),
    (500,     ABORTED_VALIDATION,  VO, 0,    540,   520,    0,      1,   0),
    (600,     COMMITTED,           FA, 1,    607,   605,    0,      0,   0),  # 2 s
    (650,     UNFINISHED,          FA, 0,    None,  680,    3,      2,   1),  # never recorded
    (700,     COMMITTED,           FA, 0,    710,   705,    0,      0,   0),  # after the window
]


def _run():
    cols = list(zip(*TXNS))
    n = len(TXNS)
    workload = Workload(submit_ms=np.array(cols[0], float) * 1000, runtime_ms=np.full(n, 20_000.0),
                        op=np.array(cols[2], np.int8), table=np.array(cols[3], np.int32))
    outcome = Outcome.from_records(
        status=np.array(cols[1], np.int8),
        end_ms=np.array([math.nan if e is None else e * 1000 for e in cols[4]]),
        commit_start_ms=np.array(cols[5], float) * 1000, retries=np.array(cols[6], np.int32),
        conflicts_same_table=np.array(cols[7], np.int32), conflicts_catalog_only=np.array(cols[8], np.int32),
        final_seq=5)
    return workload, outcome


def test_summary_over_the_steady_state_window():
    row = summarize(CONFIG, *_run())
    assert row["n_arrivals"] == 6 and row["n_unfinished"] == 1
    assert row["n_txns"] == 5
    assert row["n_committed"] == 3 and row["n_aborted"] == 2
    assert row["aborted_max_retries"] == 1 and row["aborted_validation"] == 1
    assert row["success_rate"] == pytest.approx(3 / 5)
    # Three commits over the 300 s..600 s span of recorded submit times.
    assert row["throughput_cps"] == pytest.approx(3 / 300)
    assert row["commit_latency_mean_ms"] == pytest.approx(2000)
    assert row["commit_latency_p50_ms"] == pytest.approx(2000)
    assert row["commit_latency_p95_ms"] == pytest.approx(2900)  # linear: 2000 + 0.9 * 1000
    assert row["retries_mean"] == pytest.approx(1)
    assert row["conflicts_same_table"] == 7 and row["conflicts_catalog_only"] == 8



def test_a_named_window_counts_the_transactions_submitted_in_it_instead():
    # [0 s, 450 s): the first three, all committed, one of them before the steady-state window.
    row = summarize(CONFIG, *_run(), window_s=(0.0, 450.0))
    assert row["n_arrivals"] == 3 and row["n_txns"] == 3 and row["n_committed"] == 3
    assert row["retries_mean"] == pytest.approx(4 / 3)
    assert row["commit_latency_mean_ms"] == pytest.approx((5000 + 1000 + 3000) / 3)
    assert row["throughput_cps"] == pytest.approx(3 / 300)  # over the 100 s..400 s span of their submit times
    # The steady-state window named explicitly is the default, figure for figure.
    assert summarize(CONFIG, *_run(), window_s=(300.0, 700.0)) == summarize(CONFIG, *_run())


def test_split_by_type_and_table():
    row = summarize(CONFIG, *_run())
    assert row["fa_n_txns"] == 3 and row["fa_success_rate"] == pytest.approx(2 / 3)
    assert row["vo_n_txns"] == 2 and row["vo_success_rate"] == pytest.approx(1 / 2)
    assert row["fa_throughput_cps"] == pytest.approx(2 / 300)
    assert row["fa_commit_latency_mean_ms"] == pytest.approx(1500)
    assert row["vo_commit_latency_mean_ms"] == pytest.approx(3000)
    assert row["vo_commit_latency_p99_ms"] == pytest.approx(3000)
    assert row["ma_n_txns"] == 0 and math.isnan(row["ma_success_rate"])
    assert row["table_n_txns"] == [2, 3]
    assert row["table_n_committed"] == [1, 2]
    assert row["table_success_rate"] == pytest.approx([1 / 2, 2 / 3])
    assert row["table_conflicts_same_table"] == [1, 6]
    assert row["table_conflicts_catalog_only"] == [1, 7]


def test_transactions_table_keeps_every_transaction():
    table = transactions_table(CONFIG, *_run())
    assert table.num_rows == len(TXNS)
    assert table.column("status").to_pylist()[6] == "unfinished"
    assert table.column("abort_reason").to_pylist()[3:5] == ["max_retries_exceeded", "validation_exception"]
    assert table.column("commit_latency_ms").to_pylist()[1] == pytest.approx(1000)
    assert table.column("commit_latency_ms").to_pylist()[3] is None
    assert table.column("in_window").to_pylist() == [False, True, True, True, True, True, False, False]


def test_empty_window_gives_nan_not_errors():
    workload, outcome = _run()
    empty = Outcome(**{**outcome.__dict__, "status": np.zeros(len(TXNS), np.int8)})
    row = summarize(CONFIG, workload, empty)
    assert row["n_txns"] == 0 and math.isnan(row["success_rate"]) and math.isnan(row["throughput_cps"])


@pytest.mark.parametrize("points, expected", [
    ([(0.99, 1.0), (0.97, 3.0), (0.5, 9.0)], 3.0),            # the knee
    ([(0.95, 5.0), (0.951, 2.0)], 2.0),                      # exactly 95% is not above
    ([(0.99, 2.0), (0.99, 2.0)], 2.0),                       # ties
    ([(0.9, 1.0), (0.2, 3.0)], None),                        # nothing qualifies
    ([(float("nan"), 4.0), (0.99, float("nan")), (0.99, 1.5)], 1.5),  # missing points
    ([], None),
])
def test_usable_throughput(points, expected):
    assert usable_throughput(points) == expected
