"""A failure's extra time drawn with or without the contention terms (``failed_delay``).

A failed write answers after ``failed_multiplier`` x its latency. That
latency includes the contention terms; the extra part, (failed_multiplier
- 1) x the latency, is drawn as the write's own latency without them when
``failed_delay = "uncontended"``: the store's failure path, whose time does
not grow with the requests in flight (seed 000's failed Azure appends take
3.0-3.2 s at every client count from 2 to 16, by Little's law).
"""

from dataclasses import replace

import numpy as np
import pytest

from simcore import SimConfig
from simcore.bench import run_clients
from simcore.engine import COMMITTED, run
from simcore.errors import ConfigError
from simcore.profiles import canonical_json, profile_from_json, profile_from_mapping
from simcore.providers import PROVIDERS, OperationLatency
from simcore.workload import FAST_APPEND, Workload


def _mean_failed_ms(profile, clients):
    latencies, succeeded = run_clients(profile, "cas", clients, 300.0, seed=3)
    return latencies[~succeeded].mean()


def test_an_uncontended_failure_takes_as_long_at_any_client_count():
    # A 10 ms write whose median doubles with each doubling of the requests in flight, failures answered after
    # 20 x its latency: drawn with contention, the failed op's time grows with the clients; without, it stays.
    write = OperationLatency(median_ms=10.0, sigma=0.1, failed_multiplier=20.0, contention_exponent=1.0)
    contended = PROVIDERS["s3x"].with_conditional("cas", write)
    uncontended = PROVIDERS["s3x"].with_conditional("cas", replace(write, failed_delay="uncontended"))
    # (Clients that fail are out of the race for 20 latencies, so few requests are in flight at once.)
    assert _mean_failed_ms(contended, 16) > 1.25 * _mean_failed_ms(contended, 2)
    assert _mean_failed_ms(uncontended, 16) == pytest.approx(_mean_failed_ms(uncontended, 2), rel=0.15)
    # Without the contention terms the extra 19 latencies are about 19 x 10 ms.
    assert 190.0 < _mean_failed_ms(uncontended, 2) < 1.5 * 190.0 < _mean_failed_ms(contended, 2)


def _config(failed_delay: str) -> SimConfig:
    """A store whose every operation takes 1 ms; its CAS's median grows with the CAS requests in flight (x c)
    and a failed CAS answers after 10 x its latency."""
    cas = {"median_ms": 1.0, "sigma": 1e-9, "failed_multiplier": 10.0, "contention_exponent": 1.0,
           "failed_delay": failed_delay}
    data = {"name": "one-ms", "floor_ms": 0.0, "read": {"median_ms": 1.0, "sigma": 1e-9},
            "write": {"base_ms": 1.0, "ms_per_mib": 0.0, "sigma": 1e-9}, "cas": cas}
    return SimConfig(provider="one-ms", provider_profile=canonical_json(profile_from_mapping(data)), num_tables=1,
                     protocol="published", duration_s=700.0, runtime_median_ms=1000.0, runtime_sigma=0.0,
                     runtime_min_ms=0.0)


def test_the_catalog_answers_a_failed_cas_after_an_uncontended_delay():
    # A reads at 0-1 and sends its CAS at 1004, alone in flight: 1 ms, it commits at 1005. B reads at 0.5-1.5 and
    # sends its CAS at 1004.5 with A's in flight: 2 ms (median x 2), decided at 1006.5, failed. Its answer
    # comes 10 x 2 = 20 ms after it was sent when the whole failure is contended, and 2 + 9 x 1 = 11 ms after
    # when the extra nine latencies are the uncontended 1 ms: everything after it happens 9 ms earlier.
    workload = Workload(submit_ms=np.array([0.0, 0.5]), runtime_ms=np.array([1000.0, 1000.0]),
                        op=np.full(2, FAST_APPEND, np.int8), table=np.zeros(2, np.int32))
    contended = run(_config("contended"), workload, np.random.default_rng(0))
    uncontended = run(_config("uncontended"), workload, np.random.default_rng(0))
    for outcome in (contended, uncontended):
        assert np.all(outcome.status == COMMITTED)
        assert outcome.commit_ms[0] == pytest.approx(1005.0)
        assert outcome.retries[1] == 1
    assert contended.commit_ms[1] - uncontended.commit_ms[1] == pytest.approx(9.0)


def test_the_failed_delay_round_trips_and_defaults_to_contended():
    uncontended = profile_from_json(_config("uncontended").provider_profile)
    assert uncontended.cas.failed_delay == "uncontended"
    assert profile_from_json(canonical_json(uncontended)) == uncontended
    # The default is the model as it was: left out of the canonical form, so stored configs keep their hash.
    assert "failed_delay" not in _config("contended").provider_profile
    with pytest.raises(ConfigError) as error:
        _config("slow")
    assert error.value.field == "cas.failed_delay"
