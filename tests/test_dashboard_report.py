"""`python -m dashboards compare`: the variant comparisons as text, on hand-made stores."""

from commit_sweeps.dashboard_command import main
import json

from dashboards.report import comparisons_of, format_comparison, format_searched, searched_knees, summary_line
from dashboards.snapshot import read_store
from store_fixtures import write_store_file
from test_dashboard_variants import curve_rows, ok, retry_store_rows


def test_each_curve_shows_every_policy_with_its_change_from_immediate(tmp_path):
    write_store_file(str(tmp_path), "retry_policies", retry_store_rows(tables=(1,)))
    (comparison,) = comparisons_of(read_store(str(tmp_path)))
    header, row = format_comparison(comparison).splitlines()[1:3]
    assert header.split()[:7] == ["curve", "immediate", "c/s", "backoff", "c/s", "split", "c/s"]
    # Knees: immediate 4.0 c/s, backoff 6.0 (+50%), split 6.6 (+65%); VO p99 at the knees 20, 15 and 10 s.
    assert row.split() == ["s3", "1t", "fa=0.9", "4.00", "6.00", "(+50%)", "6.60", "(+65%)", "-25%", "-50%"]
    assert summary_line(comparison) == ("retry_policies, against immediate: backoff: 0 same, 1 higher, 0 lower; "
                                        "split: 0 same, 1 higher, 0 lower")


def test_a_variant_with_no_usable_point_and_a_store_without_baseline(tmp_path):
    never = {100: ok(0.5, 6.0), 200: ok(0.9, 4.0)}
    rows = (curve_rows("append_catalog", {100: ok(0.99, 6.0), 200: ok(1.0, 4.0)}, catalog="storage", provider="s3x")
            + curve_rows("append_catalog", never, catalog="append", provider="s3x"))
    write_store_file(str(tmp_path / "both"), "append_catalog", rows)
    (comparison,) = comparisons_of(read_store(str(tmp_path / "both")))
    row = format_comparison(comparison).splitlines()[2].split()
    assert row[3:5] == ["6.00", "-"]  # no point of the append curve passes 95%: no usable rate, no change
    write_store_file(str(tmp_path / "append_only"), "append_catalog", curve_rows("append_catalog", never, provider="s3x",
                                                                                 catalog="append"))
    (alone,) = comparisons_of(read_store(str(tmp_path / "append_only")))
    assert "the baseline variant is not in the store" in format_comparison(alone)


def test_the_command_prints_the_comparisons_held_and_names_the_sweeps_for_the_rest(tmp_path, capsys):
    write_store_file(str(tmp_path), "retry_policies", retry_store_rows(tables=(1, 10)))
    assert main(["compare", "--store", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("s3 1t fa=0.9") == 1 and out.count("s3 10t fa=0.9") == 1
    assert "gcs_throttle" not in out
    assert main(["compare", "--store", str(tmp_path), "--experiment", "gcs_throttle"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "holds no runs of gcs_throttle" in captured.err


def test_searched_knees_per_policy_come_from_the_knee_summary(tmp_path, capsys):
    write_store_file(str(tmp_path), "retry_policies", retry_store_rows(tables=(1,)))
    curve = {"provider": "s3", "num_tables": 1, "fast_append_ratio": 0.9}
    summary = {"curves": [
        {"fixed": {**curve, "retry_policy": None}, "status": "found", "knee_rate_cps": 5.0},
        {"fixed": {**curve, "retry_policy": "backoff", "backoff_base_ms": 10.0}, "status": "found",
         "knee_rate_cps": 4.0},
        {"fixed": {**curve, "retry_policy": "split"}, "status": "below_search_range", "knee_rate_cps": None}]}
    (comparison,) = comparisons_of(read_store(str(tmp_path)))
    assert searched_knees(comparison, summary) == {("s3", 1, "0.9"): {"none": 5.0, "backoff": 4.0, "split": None}}
    row = format_searched(comparison, searched_knees(comparison, summary)).splitlines()[2]
    assert row.split() == ["s3", "1t", "fa=0.9", "5.00", "4.00", "(-20%)", "-"]
    # The command adds the table when the store holds the search's summary.
    (tmp_path / "_knee").mkdir()
    (tmp_path / "_knee" / "retry_policies.json").write_text(json.dumps(summary))
    assert main(["compare", "--store", str(tmp_path)]) == 0
    assert "searched knees (retry_policies_knee)" in capsys.readouterr().out
