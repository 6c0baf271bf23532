"""simcore against the reference simulator's own results (endive_dev_set.csv).

Twenty exp4 configurations run by cdouglas/endive at revision 3bded463 (two
seeds, one simulated hour each, same steady-state window). simcore runs each
with four seeds; ``simcore.reference.agrees`` applies the project's targets
(success within 2 points, throughput 3%, mean latency 5%, p99 10%) or three
standard errors of the seed-mean difference, whichever is wider.
"""

import csv
import os

import numpy as np
import pytest

from simcore import simulate
from simcore.reference import TARGETS, agrees, config_from_reference_row

DEV_SET = os.path.join(os.path.dirname(__file__), "data", "endive_dev_set.csv")
ROWS = list(csv.DictReader(open(DEV_SET)))
SEEDS = [1, 2, 3, 4]


def _id(row):
    latency = f"{row['catalog_latency_ms']}ms" if row["catalog_latency_ms"] else "storage"
    return (f"{row['experiment']}-{row['provider']}-{latency}-{row['num_tables']}t-"
            f"fa{row['fast_append_ratio']}-{row['inter_arrival_scale_ms']}ms")


@pytest.mark.parametrize("row", ROWS, ids=[_id(r) for r in ROWS])
def test_agrees_with_reference(row):
    ours = simulate(config_from_reference_row(row), SEEDS)
    failures = []
    for target in TARGETS:
        ref = row[f"{target.metric}_mean"]
        if ref == "":
            continue
        values = np.array([r[target.metric] for r in ours], float)
        ok, why = agrees(target, values.mean(), values.std(ddof=1), len(values), float(ref), int(row["n_seeds"]))
        if not ok:
            failures.append(f"{target.metric}: simcore {values.mean():.5g} vs reference {float(ref):.5g}: {why}")
    assert not failures, "\n".join(failures)


def test_dev_set_is_complete():
    assert len(ROWS) == 20
