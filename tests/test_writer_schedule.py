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
from simcore.workload import _writer_schedules, draw_ops, writer_phases_s


def _one_call_per_writer(config, rng, interval_ms, phases_ms=None):
    dues, ops, counts = [], [], []
    for w in range(config.writers):
        phase = rng.random() * interval_ms
        if phases_ms is not None:  # writer_phase_seed: the phase's uniform is drawn, and the given phase used
            phase = phases_ms[w]
        due = phase + interval_ms * np.arange(int(config.duration_ms / interval_ms) + 1)
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
        one_pass = _writer_schedules(config, one_pass_rng, config.writers, interval_s * 1000.0)
        for expected, got in zip(plain, one_pass):
            assert got.dtype == expected.dtype and np.array_equal(got, expected)
        assert plain[2].sum() > 0
        assert one_pass_rng.random() == plain_rng.random()  # the generator is left where the plain way leaves it


@pytest.mark.parametrize("writers, interval_s, fast_append_ratio", [(7, 0.7, 0.6), (12, 8.0, 1.0), (40, 333.3, 0.5)])
def test_a_phase_seed_gives_every_run_seed_the_same_phases(writers, interval_s, fast_append_ratio):
    config = build_config(dict(provider="s3", num_tables=4, fast_append_ratio=fast_append_ratio, writers=writers,
                               commit_interval_s=interval_s, duration_s=3600, writer_phase_seed=5))
    interval_ms = interval_s * 1000.0
    phases_ms = writer_phases_s(5, writers, interval_s) * 1000.0
    firsts = []
    for seed in (1, 2):
        plain_rng, one_pass_rng = np.random.default_rng([seed, 0]), np.random.default_rng([seed, 0])
        plain = _one_call_per_writer(config, plain_rng, interval_ms, phases_ms)
        due, ops, counts = _writer_schedules(config, one_pass_rng, config.writers, interval_ms)
        for expected, got in zip(plain, (due, ops, counts)):
            assert np.array_equal(got, expected)
        assert one_pass_rng.random() == plain_rng.random()
        firsts.append(due[np.cumsum(counts) - counts])  # each writer's first due time
    assert np.allclose(firsts[0], phases_ms) and np.array_equal(firsts[0], firsts[1])
    unseeded = _writer_schedules(config.replace(writer_phase_seed=None), np.random.default_rng([1, 0]), config.writers, interval_ms)
    assert not np.allclose(unseeded[0][np.cumsum(unseeded[2]) - unseeded[2]], phases_ms)  # each run seed's own


def test_the_real_writers_and_the_model_draw_phases_alike():
    # studies.real_clients draws its writers' phases with writer_phases_s; so does writer_phase_seed.
    phases = writer_phases_s(0, 12, 8.0)
    assert np.array_equal(phases, np.random.default_rng(0).uniform(0.0, 8.0, 12))
    assert ((0 <= phases) & (phases < 8.0)).all()
    assert np.array_equal(writer_phases_s(0, 5, 8.0), phases[:5])  # fewer writers: the same first phases
