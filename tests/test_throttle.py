"""The object-write throttle of a provider profile: a token bucket, and the client's resends of refused writes.

GCS throttles writes to one object; seed 000's failed GCS CAS take 7.1 s on
average. The measured GCS profile models that as a token bucket on the
object and a client library that resends a refused (429) write after a
growing wait (docs/reference/profiles.md). These tests pin what the terms do, in
``bench`` and in the catalog simulation, and that a profile without them
simulates as before.
"""

from __future__ import annotations

import pathlib
from dataclasses import replace

import numpy as np
import pytest

from simcore import SimConfig, simulate
from simcore.bench import bench, run_clients
from simcore.errors import ConfigError
from simcore.simulate import run_seed
from simcore.profiles import (canonical_json, dump_profile, load_profile, measured_profile, profile_from_json,
                              profile_from_mapping)
from simcore.providers import PROVIDERS, OperationLatency, Throttle

# A fast store (about 40 ms an op) whose object admits 2 writes/s: one client wants far more.
FAST = replace(PROVIDERS["s3"], name="fast", cas=OperationLatency(20.0, 0.1), read_median_ms=20.0,
               read_sigma=0.1, floor_ms=1.0)


def _throttled(provider, **throttle):
    """``provider`` whose object throttles its CAS writes."""
    return replace(provider, cas=replace(provider.cas, throttle=Throttle(**throttle)))


THROTTLED = _throttled(FAST, writes_per_s=2.0, burst=1.0)
SEED000 = str(pathlib.Path(__file__).resolve().parents[1] / "simcore" / "measured" / "seed000_conditional_writes.csv")


def test_a_throttle_caps_one_clients_goodput_at_the_token_rate():
    free, = bench(FAST, "cas", [1], [1], duration_s=300)
    capped, = bench(THROTTLED, "cas", [1], [1], duration_s=300)
    assert free.goodput_ops > 20
    # Without resends a refused write is the op's failure, answered after its round trip.
    assert capped.goodput_ops == pytest.approx(2.0, rel=0.05)
    assert capped.failure_rate > 0.8


def test_the_client_resends_refused_writes_after_a_wait():
    # 2 tokens/s, a bucket of one: an op sent about 40 ms after the last success finds 0.1 token and
    # is refused; resent 600 ms later, 1.3 tokens have come: every op is refused exactly once.
    resending = _throttled(FAST, writes_per_s=2.0, retry_max=5, retry_base_ms=600.0)
    latencies, succeeded = run_clients(resending, "cas", 1, 300.0, seed=1)
    assert succeeded.all() and len(latencies) > 300
    assert np.all((latencies > 600 + 30) & (latencies < 600 + 100))
    result, = bench(resending, "cas", [1], [1], duration_s=300)
    assert result.failure_rate == 0
    assert result.goodput_ops == pytest.approx(1000 / latencies.mean(), rel=0.02)


def test_growing_waits_until_the_resends_run_out():
    # A wait too short for a token to come: refused again, after 100, 200, 400 ms; then the op fails.
    impatient = _throttled(FAST, writes_per_s=0.5, retry_max=3, retry_base_ms=100.0)
    latencies, succeeded = run_clients(impatient, "cas", 1, 600.0, seed=1)
    failed = latencies[~succeeded]
    assert len(failed) > 50 and succeeded.sum() > 50
    assert np.all(failed > 100 + 200 + 400 + 4 * 15)


def test_with_many_clients_refused_writes_fail_slowly():
    gcp = measured_profile("gcp")
    latencies, succeeded = run_clients(gcp, "cas", 16, 300.0, seed=1)
    assert 0.4 < 1 - succeeded.mean() < 0.9
    # Seed 000: failed GCS CAS 7.1 s on average, successful 0.53 s.
    assert latencies[~succeeded].mean() > 5 * latencies[succeeded].mean()


def test_a_profile_without_resends_throttles_the_catalog_as_the_config_throttle_does():
    # One token bucket in the engine: the store's (profile) and the what-if one (SimConfig.cas_throttle_per_s).
    base = SimConfig(provider="fast", provider_profile=canonical_json(FAST), num_tables=1,
                     inter_arrival_scale_ms=150, duration_s=1900)
    by_config = base.replace(cas_throttle_per_s=2.0, cas_throttle_burst=1.0)
    by_profile = base.replace(provider_profile=canonical_json(THROTTLED))
    _, a = run_seed(by_config, 5)
    _, b = run_seed(by_profile, 5)
    assert a.cas_throttled.sum() > 100
    np.testing.assert_array_equal(a.status, b.status)
    np.testing.assert_array_equal(a.end_ms, b.end_ms)
    np.testing.assert_array_equal(a.cas_throttled, b.cas_throttled)


def test_resent_writes_cost_the_catalog_no_retry():
    plain = SimConfig(provider="fast", provider_profile=canonical_json(THROTTLED), num_tables=1,
                      inter_arrival_scale_ms=1000, duration_s=1900)
    resending = plain.replace(provider_profile=canonical_json(
        _throttled(FAST, writes_per_s=2.0, retry_max=6, retry_base_ms=200.0)))
    _, refused_fail = run_seed(plain, 5)
    _, resent = run_seed(resending, 5)
    # The client library absorbs the refusals: fewer failed attempts for the committer to retry ...
    assert resent.retries.sum() < refused_fail.retries.sum()
    # ... while the object still refused requests (each resend may be refused again).
    assert resent.cas_throttled.sum() > 0


def test_the_throttle_table_round_trips_and_rejects_bad_values(tmp_path):
    profile = measured_profile("gcp")
    assert profile.cas.throttle is not None and profile.cas.throttle.retry_max >= 1
    assert profile.append is None
    path = tmp_path / "gcp.toml"
    path.write_text(dump_profile(profile))
    assert "[cas.throttle]" in path.read_text()
    assert load_profile(str(path)) == profile
    assert profile_from_json(canonical_json(profile)) == profile
    text = path.read_text()
    for old, new, field in ((f"retry_max = {profile.cas.throttle.retry_max}\n", "retry_max = 1.5\n", "retry_max"),
                            ("burst = ", "burst = 0.5 #", "burst"),
                            ("writes_per_s = ", "speed = 1\nwrites_per_s = ", "speed"),
                            ("retry_jitter = ", "retry_jitter = 2 #", "retry_jitter")):
        broken = tmp_path / "bad.toml"
        assert old in text
        broken.write_text(text.replace(old, new, 1))
        with pytest.raises(ConfigError) as error:
            load_profile(str(broken))
        assert error.value.field == f"{broken}: cas.throttle.{field}"


def test_a_measured_gcp_sweep_point_is_throttled_and_the_reference_is_not():
    config = SimConfig(provider="gcp", num_tables=1, inter_arrival_scale_ms=2000, duration_s=1900)
    reference, = simulate(config, [1])
    measured, = simulate(config.replace(latency_model="measured"), [1])
    assert reference["cas_throttled"] == 0
    assert measured["cas_throttled"] > 0


def test_a_bucket_of_commits_lets_stale_writes_fail_without_a_token():
    # 5 tokens/s, two resends 100 ms apart. Counting every write, the tokens go to whichever writes come
    # first, stale ones included, and 16 clients commit well below the rate; counting only writes that
    # would commit (a stale one is refused on its precondition first), the object commits at its rate.
    def counting(what):
        return _throttled(FAST, writes_per_s=5.0, retry_max=2, retry_base_ms=100.0, counts=what)

    writes, = bench(counting("writes"), "cas", [16], [1], duration_s=300)
    commits, = bench(counting("commits"), "cas", [16], [1], duration_s=300)
    assert commits.goodput_ops == pytest.approx(5.0, rel=0.05)
    assert writes.goodput_ops < 0.85 * 5.0
    assert commits.failure_rate > 0.8  # the stale writes still fail


def _one_ms_config(counts: str) -> SimConfig:
    """A store whose every operation takes 1 ms, its object one token per 1,000 s (a bucket of one)."""
    data = {"name": "slow-object", "floor_ms": 0.0, "read": {"median_ms": 1.0, "sigma": 1e-9},
            "write": {"base_ms": 1.0, "ms_per_mib": 0.0, "sigma": 1e-9},
            "cas": {"median_ms": 1.0, "sigma": 1e-9, "throttle": {"writes_per_s": 0.001, "counts": counts}}}
    return SimConfig(provider="slow-object", provider_profile=canonical_json(profile_from_mapping(data)),
                     num_tables=1, protocol="published", duration_s=700.0, runtime_median_ms=1000.0,
                     runtime_sigma=0.0, runtime_min_ms=0.0)


@pytest.mark.parametrize("counts", ["writes", "commits"])
def test_which_writes_take_a_token_in_the_catalog(counts):
    # A reads at 0-1 and sends its CAS at 1004 (decided as it answers, 1005); B reads at 0.5-1.5 and sends
    # its CAS at 1004.5, stale by its decision at 1005.5. The bucket's one token goes to A either way. B's
    # first CAS is refused for want of a token when every write takes one, and fails on its stale version,
    # without asking the bucket, when only commits do; each of its retries would commit and finds no token.
    from simcore.engine import COMMITTED, run
    from simcore.workload import FAST_APPEND, Workload

    workload = Workload(submit_ms=np.array([0.0, 0.5]), runtime_ms=np.array([1000.0, 1000.0]),
                        op=np.full(2, FAST_APPEND, np.int8), table=np.zeros(2, np.int32))
    outcome = run(_one_ms_config(counts), workload, np.random.default_rng(0))
    assert outcome.status[0] == COMMITTED and outcome.commit_ms[0] == pytest.approx(1005.0)
    assert outcome.status[1] != COMMITTED and outcome.retries[1] >= 1
    attempts = outcome.retries[1] + 1
    assert outcome.cas_throttled[1] == (attempts if counts == "writes" else attempts - 1)
    assert outcome.cas_throttled[0] == 0


def test_what_the_bucket_counts_round_trips_and_defaults_to_every_write(tmp_path):
    commits = profile_from_json(_one_ms_config("commits").provider_profile)
    assert commits.cas.throttle.counts == "commits"
    assert profile_from_json(canonical_json(commits)) == commits
    (tmp_path / "p.toml").write_text(dump_profile(commits))
    assert 'counts = "commits"' in (tmp_path / "p.toml").read_text()
    assert load_profile(str(tmp_path / "p.toml")) == commits
    # The default is the throttle as it was: left out of the canonical form, so stored configs keep their hash.
    assert "counts" not in _one_ms_config("writes").provider_profile
    assert profile_from_json(_one_ms_config("writes").provider_profile).cas.throttle.counts == "writes"
    with pytest.raises(ConfigError) as error:
        _one_ms_config("reads")
    assert error.value.field == "cas.throttle.counts"
