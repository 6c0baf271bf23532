"""The variant comparison views on hand-made stores with known answers.

gcs_throttle (unthrottled vs 1 write/s), retry_policies (immediate vs backoff
vs split) and append_catalog (CAS vs append) each run the same curves under
two or three values of one setting. These tests write small stores, read them
back through the dashboard's reader and check the variants found, the
baseline, and each curve's difference in usable throughput and in VO p99
latency at each variant's own knee, as the page shows them.
"""

import pytest

from dashboards.payload import build_payload
from dashboards.points import group_points
from dashboards.snapshot import read_store
from dashboards.studies import group_studies, telling_fields
from store_fixtures import contract_row, write_store_file
from dashboards.variants import ComparisonSpec, compare_variants, difference
from dashboards.frontier import curve_frontier, curve_frontiers


def ok(success, throughput, **more):
    return {"success_rate": success, "throughput_cps": throughput, **more}


def curve_rows(experiment, curve, seed=1, **config_fields):
    """Rows of one curve: {scale_ms: metrics} for ``seed``."""
    base = {"provider": "s3", "num_tables": 1, "fast_append_ratio": 1.0}
    return [contract_row(experiment, {**base, **config_fields, "inter_arrival_scale_ms": float(scale)}, seed, metrics)
            for scale, metrics in curve.items()]


def comparison_of(tmp_path, experiment, rows):
    write_store_file(str(tmp_path), experiment, rows)
    snapshot = read_store(str(tmp_path))
    studies = group_studies(group_points(snapshot.rows))
    frontiers = curve_frontiers(studies)
    spec = ComparisonSpec.from_plan(experiment, snapshot.plans[experiment])  # as the sweep declared it
    return compare_variants(spec, studies, lambda sid, key: frontiers.get((sid, key))), snapshot


def vo(success, throughput, vo_success, vo_p99_ms):
    return ok(success, throughput, vo_success_rate=vo_success, vo_commit_latency_p99_ms=vo_p99_ms)


# Immediate retry: knee at 200 ms (4.0 c/s, VO p99 20 s). Backoff: knee at 100 ms
# (6.0 c/s, VO p99 15 s). Split: knee at 100 ms too (6.6 c/s, VO p99 10 s).
IMMEDIATE = {100: vo(0.99, 6.2, 0.90, 40_000.0), 200: vo(1.0, 4.0, 0.97, 20_000.0), 500: vo(1.0, 2.0, 1.0, 9_000.0)}
BACKOFF = {100: vo(0.99, 6.0, 0.96, 15_000.0), 200: vo(1.0, 4.0, 0.99, 12_000.0), 500: vo(1.0, 2.0, 1.0, 9_000.0)}
SPLIT = {100: vo(0.99, 6.6, 0.98, 10_000.0), 200: vo(1.0, 4.0, 1.0, 9_000.0), 500: vo(1.0, 2.0, 1.0, 8_000.0)}


def retry_store_rows(providers=("s3",), tables=(1, 10)):
    rows = []
    for provider in providers:
        for count in tables:
            for policy, curve in ((None, IMMEDIATE), ("backoff", BACKOFF), ("split", SPLIT)):
                rows += curve_rows("retry_policies", curve, provider=provider, num_tables=count,
                                   fast_append_ratio=0.9, retry_policy=policy)
    return rows


def test_retry_policies_differences_in_usable_throughput_and_vo_p99(tmp_path):
    comparison, _ = comparison_of(tmp_path, "retry_policies", retry_store_rows())
    assert [(v.id, v.label) for v in comparison.variants] == [("none", "immediate"), ("backoff", "backoff"),
                                                              ("split", "split")]
    assert comparison.baseline == "none"
    assert [(c.series, c.num_tables, c.mix) for c in comparison.curves] == [("s3", 1, "0.9"), ("s3", 10, "0.9")]
    one = comparison.curves[0]
    backoff, split = one.differences["backoff"], one.differences["split"]
    assert backoff.usable_cps == pytest.approx(2.0)          # 6.0 - 4.0
    assert backoff.usable_ratio == pytest.approx(0.5)        # 6.0 / 4.0 - 1
    assert backoff.vo_p99_ms == pytest.approx(-5_000.0)      # 15 s at its knee vs 20 s at immediate's
    assert backoff.vo_p99_ratio == pytest.approx(-0.25)
    assert split.usable_cps == pytest.approx(2.6) and split.usable_ratio == pytest.approx(0.65)
    assert split.vo_p99_ms == pytest.approx(-10_000.0) and split.vo_p99_ratio == pytest.approx(-0.5)
    assert set(one.differences) == {"backoff", "split"}  # the baseline is not compared with itself


def test_the_payload_carries_the_retry_differences_in_seconds(tmp_path):
    write_store_file(str(tmp_path), "retry_policies", retry_store_rows(tables=(1,)))
    payload = build_payload(read_store(str(tmp_path)))
    entry = payload["comparisons"]["retry_policies"]
    assert entry["baseline"] == "none"
    assert [variant["label"] for variant in entry["variants"]] == ["immediate", "backoff", "split"]
    (curve,) = entry["curves"]
    assert (curve["p"], curve["t"], curve["m"], curve["in"]) == ("s3", 1, "0.9", ["none", "backoff", "split"])
    assert curve["d"]["backoff"] == {"usable_cps": pytest.approx(2.0), "usable_ratio": pytest.approx(0.5),
                                     "vo_p99_s": pytest.approx(-5.0), "vo_p99_ratio": pytest.approx(-0.25)}
    # Each variant's own curve (knee, VO p99 at the knee) is in its study's payload.
    studies = {study["id"]: study for study in payload["studies"]}
    split_study = studies[next(v["study"] for v in entry["variants"] if v["id"] == "split")]
    (split_curve,) = split_study["curves"]
    assert split_curve["usable"] == pytest.approx(6.6) and split_curve["vo_p99_s"]["mean"] == pytest.approx(10.0)


def test_retry_policy_studies_are_labelled_by_the_policy_alone(tmp_path):
    write_store_file(str(tmp_path), "retry_policies", retry_store_rows(tables=(1,)))
    studies = group_studies(group_points(read_store(str(tmp_path)).rows))
    # Equal sizes: the plainest variant (immediate, no backoff settings) keeps the plain id.
    assert [(study.id, study.label) for study in studies] == [
        ("retry_policies", "retry_policies (retry_policy=immediate)"),
        ("retry_policies~2", "retry_policies (retry_policy=backoff)"),
        ("retry_policies~3", "retry_policies (retry_policy=split)")]


def test_telling_fields_drops_settings_that_follow_from_an_earlier_one():
    variants = [{"retry_policy": None, "backoff_base_ms": None, "duration_s": 3600.0},
                {"retry_policy": "backoff", "backoff_base_ms": 10.0, "duration_s": 3600.0},
                {"retry_policy": "split", "backoff_base_ms": 10.0, "duration_s": 3600.0}]
    assert telling_fields(variants) == ["retry_policy"]
    # Two backoff bases under one policy: the base now tells variants apart too.
    variants.append({"retry_policy": "backoff", "backoff_base_ms": 50.0, "duration_s": 3600.0})
    assert telling_fields(variants) == ["retry_policy", "backoff_base_ms"]


def test_the_throttled_gcs_frontier_beside_the_unthrottled_one(tmp_path):
    unthrottled = {200: ok(0.90, 4.5), 500: ok(0.99, 2.0), 1000: ok(1.0, 1.0)}
    # The 1 write/s bucket: no point with more than ~0.8 c/s passes.
    throttled = {200: ok(0.30, 1.2), 500: ok(0.60, 1.1), 1000: ok(0.97, 0.8, cas_throttled=30, n_txns=1000),
                 5000: ok(1.0, 0.2, cas_throttled=0, n_txns=250)}
    rows = []
    for count in (1, 10):
        rows += curve_rows("gcs_throttle", unthrottled, provider="gcp", num_tables=count)
        rows += curve_rows("gcs_throttle", throttled, provider="gcp", num_tables=count, cas_throttle_per_s=1.0)
    comparison, snapshot = comparison_of(tmp_path, "gcs_throttle", rows)
    assert [(v.id, v.label, v.value) for v in comparison.variants] == [
        ("none", "unthrottled", None), ("1", "throttled to 1 write/s", 1.0)]
    for curve in comparison.curves:
        assert curve.frontiers["none"].usable_cps == pytest.approx(2.0)
        assert curve.frontiers["1"].usable_cps == pytest.approx(0.8)
        assert curve.differences["1"].usable_cps == pytest.approx(-1.2)
        assert curve.differences["1"].usable_ratio == pytest.approx(-0.6)
        assert curve.differences["1"].vo_p99_ms is None  # FA only: no VO latency to compare
    payload = build_payload(snapshot)
    entry = payload["comparisons"]["gcs_throttle"]
    assert [curve["t"] for curve in entry["curves"]] == [1, 10]
    # CAS refused by the throttle at the throttled knee: 30 of 1,000 transactions.
    assert entry["curves"][0]["throttled"] == {"1": pytest.approx(0.03)}
    labels = sorted(study["label"] for study in payload["studies"])
    assert labels == ["gcs_throttle (cas_throttle_per_s=1)", "gcs_throttle (cas_throttle_per_s=unthrottled)"]


def test_cas_vs_append_catalog_baseline_is_cas(tmp_path):
    rows = []
    for catalog, curve in (("storage", {50: ok(0.8, 15.0), 100: ok(0.99, 9.5), 200: ok(1.0, 5.0)}),
                           ("append", {50: ok(0.97, 19.0), 100: ok(1.0, 9.9), 200: ok(1.0, 5.0)})):
        rows += curve_rows("append_catalog", curve, provider="s3x", catalog=catalog)
    comparison, _ = comparison_of(tmp_path, "append_catalog", rows)
    assert [(v.id, v.label) for v in comparison.variants] == [("storage", "CAS (storage catalog)"),
                                                              ("append", "conditional append")]
    (curve,) = comparison.curves
    # Append passes at 50 ms (19 c/s); CAS only from 100 ms (9.5 c/s).
    assert curve.differences["append"].usable_cps == pytest.approx(9.5)
    assert curve.differences["append"].usable_ratio == pytest.approx(1.0)


def test_a_partial_comparison_says_what_it_lacks(tmp_path):
    # Only backoff ran: no baseline, so no differences; a curve only one variant ran has none either.
    rows = curve_rows("retry_policies", BACKOFF, fast_append_ratio=0.9, retry_policy="backoff")
    rows += curve_rows("retry_policies", SPLIT, fast_append_ratio=0.9, retry_policy="split", num_tables=10)
    comparison, snapshot = comparison_of(tmp_path, "retry_policies", rows)
    assert comparison.baseline is None
    assert all(curve.differences == {} for curve in comparison.curves)
    assert [sorted(curve.frontiers) for curve in comparison.curves] == [["backoff"], ["split"]]
    payload = build_payload(snapshot)
    assert payload["comparisons"]["retry_policies"]["baseline"] is None
    # Only the studies the store holds are compared (the page says how to run the others).
    assert sorted(payload["comparisons"]) == ["retry_policies"]
    assert payload["comparisons"]["retry_policies"]["sweep"] == "commit-sweeps sweep retry_policies"


def test_variants_that_also_differ_elsewhere_are_left_out_and_named(tmp_path):
    rows = retry_store_rows(tables=(1, 10))
    rows += curve_rows("retry_policies", IMMEDIATE, fast_append_ratio=0.9, duration_s=1900.0)
    comparison, _ = comparison_of(tmp_path, "retry_policies", rows)
    assert [v.id for v in comparison.variants] == ["none", "backoff", "split"]
    assert len(comparison.ignored) == 1 and "duration_s=1900" in comparison.ignored[0]


def test_difference_without_a_knee_on_either_side_is_none():
    assert difference(None, None).usable_cps is None
    rows = curve_rows("retry_policies", {100: ok(0.5, 6.0)})
    no_knee = curve_frontier(group_points(rows))
    with_knee = curve_frontier(group_points(curve_rows("retry_policies", {100: ok(1.0, 6.0)})))
    assert difference(with_knee, no_knee).usable_cps is None
    assert difference(no_knee, with_knee).usable_ratio is None


def test_reference_vs_measured_latency_model_per_provider(tmp_path):
    # Reference: knee at 100 ms (9.5 c/s). Measured: the knee moves to 200 ms (4.9 c/s).
    reference = {50: ok(0.80, 15.0), 100: ok(0.99, 9.5), 200: ok(1.0, 5.0)}
    measured = {50: ok(0.60, 12.0), 100: ok(0.90, 9.0), 200: ok(0.99, 4.9)}
    rows = []
    for provider in ("s3", "azure"):
        rows += curve_rows("latency_models", reference, provider=provider)
        rows += curve_rows("latency_models", measured, provider=provider, latency_model="measured")
    comparison, _ = comparison_of(tmp_path, "latency_models", rows)
    assert [(v.id, v.value) for v in comparison.variants] == [("none", None), ("measured", "measured")]
    assert comparison.baseline == "none"
    assert sorted(curve.provider for curve in comparison.curves) == ["azure", "s3"]
    for curve in comparison.curves:
        assert curve.frontiers["none"].usable_cps == pytest.approx(9.5)
        assert curve.differences["measured"].usable_cps == pytest.approx(-4.6)


def test_client_presets_beside_the_reference(tmp_path):
    # sweeps/clients.py declares the client as its treatment: the page compares every preset's usable
    # throughput with the reference's on each curve. Reference knee 4.0 c/s; Iceberg Java's 2.0 c/s.
    reference = {100: ok(0.90, 6.0), 200: ok(0.99, 4.0), 500: ok(1.0, 2.0)}
    java = {100: ok(0.50, 3.0), 200: ok(0.80, 3.5), 500: ok(0.99, 2.0)}
    rows = (curve_rows("clients", reference, catalog="storage")
            + curve_rows("clients", java, catalog="storage", client="iceberg-java"))
    comparison, _ = comparison_of(tmp_path, "clients", rows)
    assert [(v.id, v.label) for v in comparison.variants] == [("none", "reference"), ("iceberg-java", "iceberg-java")]
    assert comparison.baseline == "none"
    (curve,) = comparison.curves
    assert curve.differences["iceberg-java"].usable_cps == pytest.approx(-2.0)
    assert curve.differences["iceberg-java"].usable_ratio == pytest.approx(-0.5)
    # Studies are named by the preset, not by the retry settings that follow from it.
    studies = group_studies(group_points(read_store(str(tmp_path)).rows))
    assert [study.label for study in studies] == ["clients (client=reference)", "clients (client=iceberg-java)"]
