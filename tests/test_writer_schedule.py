"""The writers' schedules, drawn in one pass, are the draws of one call per writer, number for number.

``workload._writer_schedules`` draws every writer's phase and op uniforms in
one call and splits them; the plain way (the model's definition) draws, for
each writer in turn, its phase, then one uniform per commit due before the
end. Both must give the same due times, op types and counts, and leave the
generator in the same state (the maintenance jobs draw from it next).
"""

from __future__ import annotations

import numpy as np
import pytest

from simcore import build_config
from simcore.workload import _writer_schedules, draw_ops


def _one_call_per_writer(config, rng, interval_ms):
    dues, ops, counts = [], [], []
    for _ in range(config.writers):
        due = rng.random() * interval_ms + interval_ms * np.arange(int(config.duration_ms / interval_ms) + 1)
        due = due[due < config.duration_ms]
        dues.append(due)
        ops.append(draw_ops(config, rng, len(due)))
        counts.append(len(due))
    return np.concatenate(dues), np.concatenate(ops), np.array(counts)


@pytest.mark.parametrize("writers, interval_s, fast_append_ratio", [
    (1, 60.0, 1.0), (7, 0.7, 0.6), (100, 60.0, 0.9), (40, 333.3, 0.5), (3, 5000.0, 1.0), (500, 7.0, 0.2)])
def test_one_pass_equals_one_call_per_writer(writers, interval_s, fast_append_ratio):
    config = build_config(dict(provider="s3", num_tables=4, fast_append_ratio=fast_append_ratio, writers=writers,
                               commit_interval_s=interval_s, duration_s=3600))
    for seed in (1, 2, 3):
        plain_rng, one_pass_rng = np.random.default_rng([seed, 0]), np.random.default_rng([seed, 0])
        plain = _one_call_per_writer(config, plain_rng, interval_s * 1000.0)
        one_pass = _writer_schedules(config, one_pass_rng, interval_s * 1000.0)
        for expected, got in zip(plain, one_pass):
            assert got.dtype == expected.dtype and np.array_equal(got, expected)
        assert plain[2].sum() > 0
        assert one_pass_rng.random() == plain_rng.random()  # the generator is left where the plain way leaves it
