"""``commit-sweeps capacity --compare``: every design valid for the store, one JSON line each, best first, the
first design that takes the asked writers marked, the store's request cost where a price is cited."""

import json

import pytest

from commit_sweeps.cli import main
from simcore.designs import DESIGNS

# A narrow, light search: the contract, not the figures, is under test.
SMALL = ["--num-tables", "2", "--fast-append-ratio", "1.0", "--seeds", "1", "--duration-s", "1900",
         "--workers", "1", "--min-scale-ms", "400", "--max-scale-ms", "2000", "--tolerance", "0.2"]
KEYS = {"design", "usable_throughput_cps", "commit_latency_p50_ms", "commit_latency_p99_ms", "requests_per_commit",
        "cost_per_1000_commits_usd"}


def compare(capsys, *flags) -> list[dict]:
    assert main(["capacity", "--compare", "--json", *flags]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_every_open_loop_design_on_s3_answers_on_one_line_each_best_first(capsys):
    rows = compare(capsys, "--provider", "s3", *SMALL)
    names = [row["design"] for row in rows]
    expected = {d.name for d in DESIGNS if not d.writers_only and d.fields.get("catalog") != "append"}
    assert set(names) == expected and len(names) >= 6
    for row in rows:
        assert KEYS <= set(row) and "max_writers" not in row
        assert row["cost_per_1000_commits_usd"] is not None
        # DuckLake's commit is rows in its database: its store requests (the data files) come before it.
        assert (row["cost_per_1000_commits_usd"] > 0) == (row["design"] != "ducklake")
    usable = [row["usable_throughput_cps"] or 0 for row in rows]
    assert usable == sorted(usable, reverse=True)


def test_a_store_with_conditional_appends_adds_the_append_design_and_one_without_a_price_says_none(capsys):
    rows = compare(capsys, "--provider", "azure", *SMALL)
    assert "append" in {row["design"] for row in rows}
    assert all(row["cost_per_1000_commits_usd"] is None for row in rows)  # Azure's price is not cited


def test_writers_mode_adds_group_commit_and_marks_the_first_design_that_takes_them(capsys):
    flags = ["--provider", "s3", "--num-tables", "1", "--fast-append-ratio", "1.0", "--seeds", "1",
             "--duration-s", "1900", "--workers", "1", "--min-scale-ms", "400", "--max-scale-ms", "2000",
             "--tolerance", "0.2", "--writers-at-interval-s", "60", "--max-writers", "400", "--writers", "300"]
    rows = compare(capsys, *flags)
    assert {"storage-group", "rest-group"} <= {row["design"] for row in rows}
    assert all("max_writers" in row for row in rows)
    marked = [row for row in rows if row.get("first_to_meet")]
    assert len(marked) == 1 and marked[0]["max_writers"] >= 300
    before = rows[:rows.index(marked[0])]
    assert all(not row["meets"] for row in before)


@pytest.mark.parametrize("flags, field", [
    (["--writers", "5"], "writers"),  # no interval
    (["--request-prices", "1,x"], "request_prices"),
])
def test_bad_compare_flags_are_one_line(capsys, flags, field):
    assert main(["capacity", "--compare", "--provider", "s3", *SMALL, *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0]
