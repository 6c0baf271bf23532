"""The commit protocol on the page: corrected studies are the main ones, published rows feed the published view,
and the correction's view sets both side by side.

Stores are written by the sweeps' own writer (``store_fixtures``); the old-format file is the store's own rows
with the ``protocol`` column dropped, as a store written before the column existed holds them.
"""

import json
from pathlib import Path

import jsonschema
import pytest

from dashboards.frontier import curve_frontiers
from dashboards.payload import build_payload
from dashboards.points import group_points
from dashboards.protocols import protocol_comparisons
from dashboards.report import comparisons_of
from dashboards.snapshot import read_store
from dashboards.studies import group_studies
from ray_jobs.schema import rows_to_table
from store_fixtures import contract_row, write_digest_named, write_store_file

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "dashboards" / "static" / "payload.schema.json")
                    .read_text())

# One curve of exp4c that seed 001 published a usable throughput for: s3x, 1 table, FA 100% (14.6 c/s).
CURVE = {"provider": "s3x", "num_tables": 1, "fast_append_ratio": 1.0}
SCALES = (20.0, 50.0, 100.0)


def curve_rows(protocol, usable_at, experiment="exp4c", seeds=(1,), scales=SCALES, **fields):
    """A curve whose points above ``usable_at`` ms pass (99% success) and below fail (50%); throughput 1000/scale."""
    return [contract_row(experiment, {**CURVE, "inter_arrival_scale_ms": scale, "protocol": protocol, **fields}, seed,
                         {"success_rate": 0.99 if scale >= usable_at else 0.5, "throughput_cps": 1000.0 / scale,
                          "fa_success_rate": 0.99 if scale >= usable_at else 0.5})
            for scale in scales for seed in seeds]


def studies_of(store):
    return group_studies(group_points(read_store(str(store)).rows))


def published_entry(payload, where="s3x, 1 table, FA 100%"):
    return next(entry for entry in payload["published"]
                if entry["experiment"] == "exp4c" and entry["metric"] == "usable_throughput" and entry["where"] == where)


def test_the_corrected_study_keeps_the_plain_id_whatever_the_sizes(tmp_path):
    # The published sweep is the larger (two seeds, another table count): it is still the variant.
    published = curve_rows("published", 50.0, seeds=(1, 2)) + curve_rows("published", 50.0, num_tables=10)
    write_store_file(str(tmp_path), "exp4c", published + curve_rows("corrected", 100.0))
    studies = studies_of(tmp_path)
    assert [(s.id, s.label, s.protocol, len(s.points)) for s in studies] == [
        ("exp4c", "exp4c (protocol=corrected)", "corrected", 3),
        ("exp4c~2", "exp4c (protocol=published)", "published", 6)]
    frontiers = curve_frontiers(studies)
    # Each study's knee is its own protocol's: nothing is averaged across them.
    assert frontiers[("exp4c", ("s3x", 1, "1"))].usable_cps == pytest.approx(10.0)
    assert frontiers[("exp4c~2", ("s3x", 1, "1"))].usable_cps == pytest.approx(20.0)


def test_the_comparison_view_has_both_knees_and_the_change(tmp_path):
    write_store_file(str(tmp_path), "exp4c", curve_rows("published", 50.0) + curve_rows("corrected", 100.0))
    payload = build_payload(read_store(str(tmp_path)))
    jsonschema.validate(payload, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert payload["protocol"] == {"default": "corrected", "published": "published",
                                   "rows": {"corrected": 3, "published": 3}}
    change = payload["protocol_changes"]["exp4c"]
    assert change["baseline"] == "published" and change["field"] == "protocol"
    assert {v["id"]: v["study"] for v in change["variants"]} == {"published": "exp4c~2", "corrected": "exp4c"}
    assert change["sweep"].endswith("--protocol published")
    (curve,) = change["curves"]
    assert (curve["s"], curve["t"], curve["m"], curve["in"]) == ("s3x", 1, "1", ["published", "corrected"])
    assert curve["d"]["corrected"]["usable_cps"] == pytest.approx(-10.0)
    assert curve["d"]["corrected"]["usable_ratio"] == pytest.approx(-0.5)
    # Both knees, from the one frontier computation, in the studies the entry names.
    knees = {study["protocol"]: next(c for c in study["curves"] if (c["s"], c["t"], c["m"]) == ("s3x", 1, "1"))
             for study in payload["studies"]}
    assert (knees["published"]["usable"], knees["published"]["knee_x"]) == (20.0, 50.0)
    assert (knees["corrected"]["usable"], knees["corrected"]["knee_x"]) == (10.0, 100.0)


def test_an_experiment_of_one_protocol_has_no_comparison(tmp_path):
    write_store_file(str(tmp_path), "exp4c", curve_rows("corrected", 50.0))
    payload = build_payload(read_store(str(tmp_path)))
    assert payload["protocol_changes"] == {} and payload["protocol"]["rows"] == {"corrected": 3}
    assert [(s["id"], s["label"], s["protocol"]) for s in payload["studies"]] == [("exp4c", "exp4c", "corrected")]


def test_only_settings_both_protocols_ran_are_paired(tmp_path):
    rows = (curve_rows("published", 50.0) + curve_rows("corrected", 100.0)
            + curve_rows("corrected", 100.0, duration_s=1900.0))  # no published run of this duration
    write_store_file(str(tmp_path), "exp4c", rows)
    studies = studies_of(tmp_path)
    frontiers = curve_frontiers(studies)
    comparison = protocol_comparisons(studies, lambda study_id, key: frontiers.get((study_id, key)))["exp4c"]
    assert sorted(variant.study.fixed["duration_s"] for variant in comparison.variants) == [3600.0, 3600.0]
    assert len(comparison.ignored) == 1 and "1900" in comparison.ignored[0]


def test_the_published_view_ignores_corrected_rows(tmp_path):
    write_store_file(str(tmp_path), "exp4c", curve_rows("corrected", 50.0))
    entry = published_entry(build_payload(read_store(str(tmp_path))))
    assert (entry["published"], entry["status"], entry["simulated"], entry["study"]) == (14.6, "not in store", None, None)
    # Add published rows with another knee: the figure is compared with them, not with the corrected ones.
    write_store_file(str(tmp_path), "exp4c", curve_rows("published", 20.0))
    entry = published_entry(build_payload(read_store(str(tmp_path))))
    assert (entry["status"], entry["simulated"], entry["study"]) == ("ok", 50.0, "exp4c~2")


def test_an_old_store_file_reads_as_published_and_shows_in_the_published_view(tmp_path):
    table = rows_to_table(curve_rows("published", 50.0))
    write_digest_named(tmp_path / "exp4c", table.drop_columns(["protocol"]))
    snapshot = read_store(str(tmp_path))
    assert not snapshot.skipped_files and {row["protocol"] for row in snapshot.rows} == {"published"}
    payload = build_payload(snapshot)
    jsonschema.validate(payload, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert [(s["id"], s["protocol"]) for s in payload["studies"]] == [("exp4c", "published")]
    assert payload["protocol"]["rows"] == {"published": 3}
    entry = published_entry(payload)
    assert (entry["status"], entry["simulated"], entry["study"]) == ("ok", 20.0, "exp4c")
    assert any("before the protocol column existed" in warning and "protocol=published" in warning
               for warning in payload["warnings"])
    assert not any("lacks the columns protocol" in warning for warning in payload["warnings"])
    # A corrected sweep into the same store: its rows are the main study, the old ones the published variant.
    write_store_file(str(tmp_path), "exp4c", curve_rows("corrected", 100.0))
    payload = build_payload(read_store(str(tmp_path)))
    assert [(s["id"], s["protocol"]) for s in payload["studies"]] == [("exp4c", "corrected"), ("exp4c~2", "published")]
    assert published_entry(payload)["study"] == "exp4c~2" and "exp4c" in payload["protocol_changes"]


def test_a_treatment_compares_its_corrected_variants_whatever_the_sizes(tmp_path):
    rows = []
    for policy in (None, "backoff"):
        rows += curve_rows("published", 50.0, experiment="retry_policies", seeds=(1, 2, 3), retry_policy=policy)
        rows += curve_rows("corrected", 100.0, experiment="retry_policies", retry_policy=policy)
    write_store_file(str(tmp_path), "retry_policies", rows)
    (comparison,) = comparisons_of(read_store(str(tmp_path)))
    assert {variant.study.protocol for variant in comparison.variants} == {"corrected"}
    assert len(comparison.ignored) == 2 and all("protocol=published" in label for label in comparison.ignored)


def test_writer_setups_say_their_protocol(tmp_path):
    rows = [contract_row("writers", {"provider": "s3", "num_tables": 10, "writers": count, "commit_interval_s": 60.0,
                                     "protocol": protocol}, 1, {"success_rate": 0.99, "throughput_cps": count / 60})
            for protocol in ("published", "corrected") for count in (10, 100)]
    write_store_file(str(tmp_path), "writers", rows)
    writers = build_payload(read_store(str(tmp_path)))["writers"]
    assert sorted((w["protocol"], w["max_writers"]) for w in writers) == [("corrected", 100), ("published", 100)]
