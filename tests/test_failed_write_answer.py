"""A failed write's slow answer drawn without the contention terms (``failed_extra = "uncontended"``).

A failed conditional write answers ``failed_multiplier`` x its latency after
it was sent; with ``failed_extra = "uncontended"`` it answers after its
latency plus (``failed_multiplier`` - 1) x a draw of the write without the
contention terms, so a slow failure answer does not grow with the requests in
flight. The engine's timeline below is worked out by hand on a store whose
every operation takes 1 ms (sigma 1e-9), in the published protocol, with a
contention exponent of 1 (a CAS sent with c conditional requests in flight,
itself included, takes c ms) and a failed multiplier of 3.
"""

import numpy as np
import pytest

from simcore import SimConfig
from simcore.bench import run_clients
from simcore.engine import COMMITTED, run
from simcore.errors import ConfigError
from simcore.profiles import canonical_json, dump_profile, profile_from_mapping
from simcore.workload import FAST_APPEND, Workload

RUNTIME_MS = 1000.0


def _profile(failed_extra=None, **cas) -> dict:
    cas = {"median_ms": 1.0, "sigma": 1e-9, "failed_multiplier": 3.0, "contention_exponent": 1.0, **cas}
    if failed_extra is not None:
        cas["failed_extra"] = failed_extra
    return {"name": "slowfail", "floor_ms": 0.0, "read": {"median_ms": 1.0, "sigma": 1e-9},
            "write": {"base_ms": 1.0, "ms_per_mib": 0.0, "sigma": 1e-9}, "cas": cas}


def _run(failed_extra):
    profile = canonical_json(profile_from_mapping(_profile(failed_extra)))
    config = SimConfig(provider="slowfail", provider_profile=profile, num_tables=2, protocol="published",
                       duration_s=700.0, runtime_median_ms=RUNTIME_MS, runtime_sigma=0.0, runtime_min_ms=0.0)
    workload = Workload(submit_ms=np.array([0.0, 0.5]), runtime_ms=np.full(2, RUNTIME_MS),
                        op=np.full(2, FAST_APPEND, np.int8), table=np.array([0, 1], np.int32))
    outcome = run(config, workload, np.random.default_rng(0))
    assert np.all(outcome.status == COMMITTED)
    return outcome


def test_a_failure_answers_after_an_uncontended_extra():
    # A: read 0-1, runtime to 1001, attempt to 1004, CAS sent alone (1 ms): committed at 1005.
    # B (another table): read 0.5-1.5, runtime to 1001.5, attempt to 1004.5, CAS sent with A's in flight
    # (2 ms): decided at 1006.5, failed. Contended, it answers 3 x 2 ms after it was sent, at 1010.5;
    # uncontended, after its 2 ms plus 2 x 1 ms, at 1008.5. Then a 1 ms re-read and (no overlap) the CAS
    # alone, 1 ms: committed at 1012.5 and 1010.5.
    contended = _run(None)
    uncontended = _run("uncontended")
    for outcome in (contended, uncontended):
        assert outcome.commit_ms[0] == pytest.approx(1005.0)
        assert outcome.retries[1] == 1
    assert contended.commit_ms[1] == pytest.approx(1012.5)
    assert uncontended.commit_ms[1] == pytest.approx(1010.5)


def test_the_default_is_left_out_of_the_profile():
    default = profile_from_mapping(_profile(None))
    assert default.cas.failed_extra == "contended"
    assert canonical_json(profile_from_mapping(_profile("contended"))) == canonical_json(default)
    assert "failed_extra" not in canonical_json(default)
    drawn = profile_from_mapping(_profile("uncontended"))
    assert 'failed_extra = "uncontended"' in dump_profile(drawn)
    assert drawn.has_measured_terms


def test_a_bad_value_names_the_field():
    with pytest.raises(ConfigError, match="cas.failed_extra.*contended or uncontended"):
        profile_from_mapping(_profile("sometimes"))


def _failed_mean_ms(profile, clients):
    latencies, succeeded = run_clients(profile, "cas", clients, 300.0, seed=3)
    return float(latencies[~succeeded].mean())


def test_in_the_benchmark_the_failures_answer_stays_flat_with_clients():
    # A 20 ms write whose median grows as c^0.5 with c requests in flight, failures answered 10 x slower:
    # contended, the failure's answer grows with the clients racing (296 to 380 ms from 2 to 16 clients);
    # uncontended it stays near read + write + 9 x 20 ms at every count (217 to 232 ms: only the write's own
    # latency grows).
    terms = {"median_ms": 20.0, "sigma": 0.2, "failed_multiplier": 10.0, "contention_exponent": 0.5}
    data = {**_profile(None), "read": {"median_ms": 5.0, "sigma": 0.1}}
    contended = profile_from_mapping({**data, "cas": terms})
    uncontended = profile_from_mapping({**data, "cas": {**terms, "failed_extra": "uncontended"}})
    grew = _failed_mean_ms(contended, 16) / _failed_mean_ms(contended, 2)
    flat = _failed_mean_ms(uncontended, 16) / _failed_mean_ms(uncontended, 2)
    assert grew > 1.2
    assert flat < 1.12
    assert 180.0 < _failed_mean_ms(uncontended, 2) < 260.0
