"""The object's commit hold (``hold_ms``), event by event and in the benchmark.

After a successful conditional write's decision the object is busy
committing it for ``hold_ms``; a write that would succeed meanwhile waits,
still in flight, and is decided again when the object is free, while one
that would fail is answered at once. On a store whose every operation takes
1 ms (sigma 1e-9: a profile's sigma must be > 0) each timeline below is
worked out by hand, in the published protocol: a catalog read observes the
catalog as it returns (1 ms), an attempt is a manifest-list read, a manifest
write and a manifest-list write (3 ms), and the CAS is decided as it
answers (1 ms).
"""

import numpy as np
import pytest

from simcore import SimConfig
from simcore.bench import bench
from simcore.engine import COMMITTED, kernel_parts, protocol_parameters, run
from simcore.errors import ConfigError
from simcore.profiles import canonical_json, profile_from_mapping
from simcore.workload import FAST_APPEND, Workload

RUNTIME_MS = 1000.0
HOLD_MS = 10.0


def _profile(hold_ms: float) -> dict:
    cas = {"median_ms": 1.0, "sigma": 1e-9}
    if hold_ms:
        cas["hold_ms"] = hold_ms
    return {"name": "held", "floor_ms": 0.0, "read": {"median_ms": 1.0, "sigma": 1e-9},
            "write": {"base_ms": 1.0, "ms_per_mib": 0.0, "sigma": 1e-9}, "cas": cas}


def _config(hold_ms: float, num_tables: int = 1) -> SimConfig:
    return SimConfig(provider="held", provider_profile=canonical_json(profile_from_mapping(_profile(hold_ms))),
                     num_tables=num_tables, protocol="published", duration_s=700.0, runtime_median_ms=RUNTIME_MS,
                     runtime_sigma=0.0, runtime_min_ms=0.0)


def _run(config, submits, tables, runtimes):
    n = len(submits)
    workload = Workload(submit_ms=np.array(submits, float), runtime_ms=np.array(runtimes, float),
                        op=np.full(n, FAST_APPEND, np.int8), table=np.array(tables, np.int32))
    outcome = run(config, workload, np.random.default_rng(0))
    assert np.all(outcome.status == COMMITTED)
    return outcome


def test_a_write_that_would_succeed_waits_for_the_hold():
    # A: read 0-1, runtime to 1001, attempt to 1004, CAS decided at 1005 (the object is held to 1015).
    # C: sent at 1004.5 with no runtime, its read returns at 1005.5 and sees A's commit; its attempt ends at
    # 1008.5 and its CAS would be decided at 1009.5, when it would succeed: it waits to 1015 instead.
    submits, tables, runtimes = [0.0, 1004.5], [0, 0], [RUNTIME_MS, 0.0]
    held = _run(_config(HOLD_MS), submits, tables, runtimes)
    assert held.commit_ms[0] == pytest.approx(1005.0)
    assert held.commit_ms[1] == pytest.approx(1005.0 + HOLD_MS)
    assert held.end_ms[1] == pytest.approx(1015.0)  # decided as it answers
    assert held.retries[1] == 0  # it waited; it did not fail
    free = _run(_config(0.0), submits, tables, runtimes)
    assert free.commit_ms[1] == pytest.approx(1009.5)


def test_a_write_that_would_fail_is_answered_at_once():
    # A commits at 1005 as above. B, on another table, read at 1.5 (before A's commit), so its CAS decided at
    # 1005.5 fails, inside A's hold, and is answered then, not at 1015. Its re-read returns at 1006.5; with
    # no overlap its retry is the CAS alone, which would succeed at 1007.5 and so waits for the hold: 1015.
    # Had the failing write waited, it would have failed at 1015 and committed at 1017.
    submits, tables, runtimes = [0.0, 0.5], [0, 1], [RUNTIME_MS, RUNTIME_MS]
    held = _run(_config(HOLD_MS, num_tables=2), submits, tables, runtimes)
    assert held.commit_ms[0] == pytest.approx(1005.0)
    assert held.retries[1] == 1
    assert held.commit_ms[1] == pytest.approx(1015.0)
    free = _run(_config(0.0, num_tables=2), submits, tables, runtimes)
    assert free.commit_ms[1] == pytest.approx(1007.5)


def test_no_hold_compiles_the_part_away_and_leaves_the_config_as_it_was():
    assert kernel_parts(protocol_parameters(_config(0.0)), False)[8] is False
    assert kernel_parts(protocol_parameters(_config(HOLD_MS)), False)[8] is True
    explicit_zero = {**_profile(0.0), "cas": {"median_ms": 1.0, "sigma": 1e-9, "hold_ms": 0}}
    assert canonical_json(profile_from_mapping(explicit_zero)) == canonical_json(profile_from_mapping(_profile(0.0)))
    assert "hold_ms" not in canonical_json(profile_from_mapping(_profile(0.0)))


def test_a_bad_hold_names_the_field():
    with pytest.raises(ConfigError, match="cas.hold_ms"):
        profile_from_mapping({**_profile(0.0), "cas": {"median_ms": 1.0, "sigma": 1e-9, "hold_ms": -1}})


def test_goodput_saturates_near_one_write_per_hold():
    # A 5 ms write (read 1 ms) without contention terms: without the hold one client makes about 160 op/s;
    # with a 20 ms hold goodput is at most 1000 / 20 = 50/s (one client, too, waits for its own last commit)
    # and levels off just below it as clients grow, while the failures take up the rest.
    data = _profile(0.0)
    data["cas"] = {"median_ms": 5.0, "sigma": 0.2}
    free = profile_from_mapping(data)
    data["cas"] = {**data["cas"], "hold_ms": 20.0}
    held = profile_from_mapping(data)
    held_goodput = [r.goodput_ops for r in bench(held, "cas", [1, 4, 16, 64], seeds=[1], duration_s=120.0)]
    free_goodput = [r.goodput_ops for r in bench(free, "cas", [1, 4, 16, 64], seeds=[1], duration_s=120.0)]
    assert free_goodput[0] > 150.0
    assert all(g <= 50.0 for g in held_goodput)
    assert 45.0 < held_goodput[2] and 45.0 < held_goodput[3]
    assert max(free_goodput) > 2 * max(held_goodput)
